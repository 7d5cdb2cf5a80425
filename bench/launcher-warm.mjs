/**
 * Warm against cold for a TypeScript pack's tool served from a catalog (ADR 0035): the
 * fixture pack tests/fixtures/ts-pack (slugify, zod, twylt) copied under .bench-tmp/,
 * `twylt scan --install` into an environment cache there (the npm registry is reached on the
 * first run only), then its `slug` tool through twylt-mcp --config, with and without --warm,
 * alternating in one run (bench/lib/warm-compare.mjs), all on the Node that runs this script
 * (`--node`). The tool runs through twylt's launcher, which imports it while a warm process
 * waits for its input. Goal: warm/cold p50 <= 0.30.
 *
 *   npm run build && node bench/launcher-warm.mjs [--rounds N] [--concurrency K] [--batches B] [--json] [--quick]
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { benchFlags } from './lib/flags.mjs';
import { compareWarm, warmTable } from './lib/warm-compare.mjs';
import { ROOT, TMP } from './prepare.mjs';

const USAGE = 'Usage: node bench/launcher-warm.mjs [--rounds N] [--concurrency K] [--batches B] [--json] [--quick]';
const flags = benchFlags(USAGE, { rounds: { type: 'string' }, concurrency: { type: 'string' }, batches: { type: 'string' } });
const ROUNDS = Number(flags.rounds ?? (flags.quick ? 10 : 40));
const K = Number(flags.concurrency ?? 4);
const BATCHES = Number(flags.batches ?? (flags.quick ? 3 : 6));
const GOAL = 0.3;

const here = join(TMP, 'launcher-warm');
const pack = join(here, 'ts-pack');
const catalog = join(here, 'catalog.json');
mkdirSync(here, { recursive: true });
if (!existsSync(pack)) cpSync(join(ROOT, 'tests/fixtures/ts-pack'), pack, { recursive: true });
// A second run finds the environment in place (content-keyed) and installs nothing.
execFileSync(process.execPath, [join(ROOT, 'packages/twylt/dist/cli/main.js'), 'scan', pack, '--install', '--envs', join(here, 'envs'), '--node', process.execPath, '--write', catalog], { stdio: ['ignore', 'ignore', 'inherit'] });

const row = await compareWarm({
  label: `slug.ts of a TypeScript pack, installed (${process.features.typescript ? 'type stripping' : 'tsx'}, Node ${process.versions.node})`,
  args: ['--config', catalog],
  name: 'slug',
  input: { text: 'Hello Wide World' },
  rounds: ROUNDS,
  concurrency: K,
  batches: BATCHES,
});
if (flags.json) process.stdout.write(`${JSON.stringify({ rounds: ROUNDS, concurrency: K, batches: BATCHES, goal: GOAL, results: [row] })}\n`);
else {
  process.stdout.write(`tools/call through twylt-mcp --config (stdio), ${ROUNDS} calls each, alternating; throughput: ${BATCHES} batches of ${K} at once\n\n`);
  process.stdout.write(warmTable([row]));
  if (!row.unavailable) process.stdout.write(`\nwarm/cold p50 ${row.p50Ratio.toFixed(2)}x, goal <= ${GOAL}: ${row.p50Ratio <= GOAL ? 'met' : 'missed'}\n`);
}
