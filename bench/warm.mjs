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
import { benchFlags } from './lib/flags.mjs';
import { compareWarm, warmTable } from './lib/warm-compare.mjs';
import { ROOT, TMP } from './prepare.mjs';

const USAGE = 'Usage: node bench/warm.mjs [--rounds N] [--concurrency K] [--batches B] [--json] [--quick]';
const flags = benchFlags(USAGE, { rounds: { type: 'string' }, concurrency: { type: 'string' }, batches: { type: 'string' } });
const ROUNDS = Number(flags.rounds ?? (flags.quick ? 10 : 60));
const K = Number(flags.concurrency ?? 4);
const BATCHES = Number(flags.batches ?? (flags.quick ? 3 : 10));

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

const results = [];
for (const tool of TOOLS) {
  if (!Array.isArray(tool.command)) results.push({ tool: tool.label, unavailable: tool.command.unavailable });
  else results.push(await compareWarm({ label: tool.label, args: ['--', ...tool.command], input: tool.input, rounds: ROUNDS, concurrency: K, batches: BATCHES }));
}

if (flags.json) {
  process.stdout.write(`${JSON.stringify({ rounds: ROUNDS, concurrency: K, batches: BATCHES, results })}\n`);
} else {
  process.stdout.write(`tools/call through twylt-mcp (stdio), ${ROUNDS} calls each, alternating; throughput: ${BATCHES} batches of ${K} at once\n\n`);
  process.stdout.write(warmTable(results));
}
