/**
 * Warm against cold through twylt-mcp over stdio (ADR 0026): for each tool, two bridges run
 * side by side, one with `--warm`, one without, and their tools/call latencies are measured
 * alternately in this one run, so the machine's load falls on both alike. Then throughput:
 * K calls at once, again alternating cold and warm batches.
 *
 *   npm run build && node bench/warm.mjs [--rounds N] [--concurrency K] [--batches B] [--json]
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { benchFlags } from './lib/flags.mjs';
import { median } from './lib/measure.mjs';
import { ROOT, TMP } from './prepare.mjs';

const USAGE = 'Usage: node bench/warm.mjs [--rounds N] [--concurrency K] [--batches B] [--json] [--quick]';
const flags = benchFlags(USAGE, { rounds: { type: 'string' }, concurrency: { type: 'string' }, batches: { type: 'string' } });
const ROUNDS = Number(flags.rounds ?? (flags.quick ? 10 : 60));
const K = Number(flags.concurrency ?? 4);
const BATCHES = Number(flags.batches ?? (flags.quick ? 3 : 10));
const BRIDGE = join(ROOT, 'packages/twylt-mcp/dist/cli.js');

/** The echo example as an executable (`twylt build --executable`), built once under .bench-tmp/. */
async function echoExecutable() {
  const outfile = join(TMP, 'warm', 'echo');
  if (existsSync(outfile)) return [outfile];
  mkdirSync(join(TMP, 'warm'), { recursive: true });
  try {
    const { buildTool } = await import(join(ROOT, 'packages/twylt/dist/build/index.js'));
    await buildTool({ entry: join(ROOT, 'examples/echo/tool.ts'), outfile, kind: 'executable' });
    return [outfile];
  } catch (error) {
    return { unavailable: `n/a (${error.message.split('\n')[0]})` };
  }
}

const TOOLS = [
  { label: 'echo, compiled (node build/examples/echo/tool.js)', command: [process.execPath, join(ROOT, 'build/examples/echo/tool.js')], input: { text: 'hello' } },
  { label: 'echo, executable (twylt build --executable)', command: await echoExecutable(), input: { text: 'hello' } },
  { label: 'Python fixture (tests/fixtures/python/echo_tool.py)', command: ['python3', join(ROOT, 'tests/fixtures/python/echo_tool.py')], input: { text: 'hello' } },
];

async function bridge(command, extra) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BRIDGE, ...extra, '--', ...command], stderr: 'ignore' });
  const client = new Client({ name: 'twylt-warm-bench', version: '0.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const name = tools[0].name;
  return {
    call: async (input) => {
      const result = await client.callTool({ name, arguments: input });
      if (result.isError) throw new Error(`the bridge reported an error: ${JSON.stringify(result.content)}`);
    },
    close: () => client.close(),
  };
}

async function time(fn) {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];

const results = [];
for (const tool of TOOLS) {
  if (!Array.isArray(tool.command)) {
    results.push({ tool: tool.label, unavailable: tool.command.unavailable });
    continue;
  }
  let cold;
  let warm;
  try {
    cold = await bridge(tool.command, []);
    warm = await bridge(tool.command, ['--warm', String(K)]);
  } catch (error) {
    await cold?.close();
    results.push({ tool: tool.label, unavailable: `n/a (${error.message.split('\n')[0]})` });
    continue;
  }
  const samples = { cold: [], warm: [] };
  const paths = [
    ['cold', cold],
    ['warm', warm],
  ];
  for (const [, path] of paths) await path.call(tool.input); // a first call each, and a check
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < 2; k++) {
      const [id, path] = paths[(k + round) % 2];
      samples[id].push(await time(() => path.call(tool.input)));
    }
  }
  // Throughput: K calls at once per batch, cold and warm batches alternating.
  const batchMs = { cold: [], warm: [] };
  for (let batch = 0; batch < BATCHES; batch++) {
    for (let k = 0; k < 2; k++) {
      const [id, path] = paths[(k + batch) % 2];
      batchMs[id].push(await time(() => Promise.all(Array.from({ length: K }, () => path.call(tool.input)))));
    }
  }
  await cold.close();
  await warm.close();
  const row = { tool: tool.label };
  for (const id of ['cold', 'warm']) {
    const total = batchMs[id].reduce((sum, ms) => sum + ms, 0);
    row[id] = { p50: median(samples[id]), p99: percentile(samples[id], 99), callsPerSecond: (K * BATCHES * 1000) / total };
  }
  row.p50Ratio = row.warm.p50 / row.cold.p50;
  row.throughputRatio = row.warm.callsPerSecond / row.cold.callsPerSecond;
  results.push(row);
}

if (flags.json) {
  process.stdout.write(`${JSON.stringify({ rounds: ROUNDS, concurrency: K, batches: BATCHES, results })}\n`);
} else {
  const ms = (value) => `${value.toFixed(1)} ms`;
  process.stdout.write(`tools/call through twylt-mcp (stdio), ${ROUNDS} calls each, alternating; throughput: ${BATCHES} batches of ${K} at once\n\n`);
  process.stdout.write('| tool | cold p50 | cold p99 | warm p50 | warm p99 | warm/cold p50 | cold calls/s | warm calls/s |\n|---|---|---|---|---|---|---|---|\n');
  for (const row of results) {
    if (row.unavailable) process.stdout.write(`| ${row.tool} | ${row.unavailable} | | | | | | |\n`);
    else {
      process.stdout.write(
        `| ${row.tool} | ${ms(row.cold.p50)} | ${ms(row.cold.p99)} | ${ms(row.warm.p50)} | ${ms(row.warm.p99)} | ${row.p50Ratio.toFixed(2)}x | ${row.cold.callsPerSecond.toFixed(1)} | ${row.warm.callsPerSecond.toFixed(1)} |\n`,
      );
    }
  }
}
