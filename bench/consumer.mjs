/**
 * Consumer-side overhead, measured inside one long-lived consumer process: a call of the
 * echo tool through the client library (`twylt/client`) and through the MCP bridge
 * (`twylt-mcp`), each alternated with a direct spawn of the same tool that parses its stdout.
 * Prints one JSON object: {client, mcp, direct} with per-call latencies in ms, or the
 * reason a row could not run.
 *
 *   node bench/consumer.mjs ROUNDS TOOL_JS BRIDGE_JS
 */
import { existsSync } from 'node:fs';
import { directCall } from './lib/direct.mjs';

const [rounds, toolJs, bridgeJs] = [Number(process.argv[2]), process.argv[3], process.argv[4]];
const toolCommand = [process.execPath, toolJs];
const INPUT = { text: 'hello' };

/** The floor: spawn the tool with the input as its argument and parse what it prints. */
const direct = () => directCall(toolCommand, INPUT);

async function clientCall() {
  let client;
  try {
    const { TwyltClient } = await import('twylt/client');
    client = new TwyltClient(toolCommand);
  } catch (error) {
    return { unavailable: `n/a (not built: ${error.message.split('\n')[0]})` };
  }
  return { call: async () => (await client.call(INPUT)).output };
}

async function mcpCall() {
  if (!existsSync(bridgeJs)) return { unavailable: 'n/a (not built)' };
  let Client, StdioClientTransport;
  try {
    ({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
    ({ StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js'));
  } catch (error) {
    return { unavailable: `n/a (MCP SDK missing: ${error.message.split('\n')[0]})` };
  }
  const transport = new StdioClientTransport({ command: process.execPath, args: [bridgeJs, '--', ...toolCommand], stderr: 'ignore' });
  const client = new Client({ name: 'twylt-bench', version: '0.0.0' });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    const name = tools.find((tool) => tool.name === 'echo')?.name ?? tools[0]?.name;
    if (!name) throw new Error('the bridge lists no tool');
    return {
      call: async () => {
        const result = await client.callTool({ name, arguments: INPUT });
        if (result.isError) throw new Error(`the bridge reported an error: ${JSON.stringify(result.content)}`);
        return result;
      },
      close: () => client.close(),
    };
  } catch (error) {
    await client.close().catch(() => {});
    return { unavailable: `n/a (bridge failed: ${error.message.split('\n')[0]})` };
  }
}

async function time(fn) {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const rows = { client: await clientCall(), mcp: await mcpCall() };
const samples = { direct: [], client: [], mcp: [] };
const runners = [['direct', direct], ...Object.entries(rows).filter(([, row]) => row.call).map(([id, row]) => [id, row.call])];
for (const [, fn] of runners) await fn(); // warm-up, and a check that each path works
for (let round = 0; round < rounds; round++) {
  for (let k = 0; k < runners.length; k++) {
    const [id, fn] = runners[(k + round) % runners.length];
    samples[id].push(await time(fn));
  }
}
for (const row of Object.values(rows)) await row.close?.();
const out = { direct: { samples: samples.direct } };
for (const [id, row] of Object.entries(rows)) out[id] = row.call ? { samples: samples[id] } : { unavailable: row.unavailable };
process.stdout.write(`${JSON.stringify(out)}\n`);
