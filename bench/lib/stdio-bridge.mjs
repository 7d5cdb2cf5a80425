/**
 * twylt-mcp over stdio with an MCP client, as the bridge benchmarks drive it (warm, observe,
 * sandbox): one tool called again and again; an error result fails the benchmark.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const BRIDGE = join(new URL('../..', import.meta.url).pathname, 'packages/twylt-mcp/dist/cli.js');

/**
 * `twylt-mcp ARGS`; `call(input)` resolves to its latency in ms. `name`: the tool to call
 * (default: the first listed); `env`: the bridge's whole environment (default: this one's).
 */
export async function stdioBridge(args, { name, env, stderr = 'ignore' } = {}) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BRIDGE, ...args], env, stderr });
  const client = new Client({ name: 'twylt-bench', version: '0.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const tool = name ?? tools[0].name;
  return {
    call: (input) =>
      elapsedMs(async () => {
        const result = await client.callTool({ name: tool, arguments: input });
        if (result.isError) throw new Error(`the bridge reported an error: ${JSON.stringify(result.content)}`);
      }),
    close: () => client.close(),
  };
}

/** How long `fn` took, in ms. */
export async function elapsedMs(fn) {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}
