/**
 * How long a TypeScript tool takes to answer when run from its source, with no build: the
 * echo example on Node 20 through tsx (the only way there) against Node 22/24/26, which strip
 * the types themselves, Bun and Deno. Commands alternated, medians of the runs; the runtimes
 * come from scripts/runtimes.mjs (a missing one is left out, saying so).
 *
 *   node bench/ts-source.mjs [--runs N]      (default 9)
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { installedRuntime } from '../scripts/runtimes.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TOOL = 'examples/echo/tool.ts';
const at = process.argv.indexOf('--runs');
const runs = at === -1 ? 9 : Number(process.argv[at + 1]);
if (!Number.isInteger(runs) || runs < 1) throw new Error('usage: node bench/ts-source.mjs [--runs N]');

const forms = { 'npx tsx tool.ts (Node 20)': ['npx', 'tsx', TOOL], 'node --import tsx tool.ts (Node 20)': [process.execPath, '--import', 'tsx', TOOL] };
for (const [name, label] of [['node22', 'node tool.ts (Node 22)'], ['node24', 'node tool.ts (Node 24)'], ['node26', 'node tool.ts (Node 26)'], ['bun', 'bun tool.ts'], ['deno', 'deno run -A tool.ts']]) {
  const binary = installedRuntime(name);
  if (binary === undefined) console.error(`ts-source: ${name} left out: node scripts/runtimes.mjs install ${name}`);
  else forms[label] = name === 'deno' ? [binary, 'run', '-A', TOOL] : [binary, TOOL];
}
const times = Object.fromEntries(Object.keys(forms).map((label) => [label, []]));
for (let i = 0; i < runs; i++) {
  for (const [label, argv] of Object.entries(forms)) {
    const started = performance.now();
    const result = spawnSync(argv[0], [...argv.slice(1), '{"text": "hi"}'], { cwd: ROOT, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${label} failed (exit ${result.status}): ${result.stderr}`);
    times[label].push(performance.now() - started);
  }
}
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
const baseline = median(times['npx tsx tool.ts (Node 20)']);
for (const [label, values] of Object.entries(times)) {
  const m = median(values);
  console.log(`${label.padEnd(36)} ${(m / 1000).toFixed(2)} s  ${(m / baseline).toFixed(2)}x of npx tsx`);
}
