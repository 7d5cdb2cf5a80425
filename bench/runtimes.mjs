/**
 * Start-up of the echo tool on every runtime, as source and as an executable, each against
 * that runtime's own bare start, all in one run with the commands alternated (see
 * docs/performance.md, "Start-up on every runtime").
 *
 *   node bench/runtimes.mjs            build the executables, then the default rounds
 *   node bench/runtimes.mjs --quick    fewer rounds (noisier)
 *   node bench/runtimes.mjs --runs N --json
 *
 * Needs `npm run build` and the runtimes (node scripts/runtimes.mjs install); a runtime that
 * is not installed, or an executable that cannot be built here (deno compile without
 * denort), is left out and said so.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { installedRuntime } from '../scripts/runtimes.mjs';
import { benchFlags, usageError } from './lib/flags.mjs';
import { alternate, median } from './lib/measure.mjs';
import { ROOT } from './prepare.mjs';

const USAGE = `usage: node bench/runtimes.mjs [--quick] [--runs N] [--json]
Start-up of the echo tool as source and as an executable on every runtime, against each runtime's bare start.`;
const flags = benchFlags(USAGE, { runs: { type: 'string' } });
const rounds = Number(flags.runs ?? (flags.quick ? 5 : 15));
if (!Number.isInteger(rounds) || rounds < 1) usageError('--runs must be a positive integer', USAGE);
const log = (text) => process.stderr.write(`${text}\n`);

const TMP = join(ROOT, '.bench-tmp', 'runtimes');
const SOURCE = join(ROOT, 'examples/echo/tool.ts');
const CLI = join(ROOT, 'packages/twylt/dist/cli/main.js');
const ARG = '{"text": "hello"}';
/**
 * NODE_EXTRA_CA_CERTS (set on this kind of machine) is read by Node 20 at every start, by
 * Node 22 and later only when TLS is first used: left set, it doubles Node 20's bare start
 * here. Cleared for every command, so that each runtime starts as it does by default.
 */
const ENV = { NODE_EXTRA_CA_CERTS: '' };
const cmd = (...argv) => ({ argv, cwd: ROOT, env: ENV });

/** Builds the echo executable with `twylt build` run by `runner`; undefined (and why) when it cannot. */
function buildEcho(name, runner, options = [], env = {}) {
  const out = join(TMP, `echo-${name}`);
  try {
    execFileSync(runner, [CLI, 'build', SOURCE, '--executable', ...options, '-o', out], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    return out;
  } catch (error) {
    log(`  ${name}: no executable: ${`${error.stderr ?? error.message}`.trim().split('\n')[0]}`);
    return undefined;
  }
}

rmSync(TMP, { recursive: true, force: true });
mkdirSync(TMP, { recursive: true });
log('building the echo executables (a copy of each runtime, about 100 MB each)...');

/** Per runtime: its bare start, the source run, the executable. */
const RUNTIMES = [];
const node20 = process.execPath;
RUNTIMES.push({
  name: `Node ${process.versions.node}`,
  bare: cmd(node20, '-e', '0'),
  source: { label: 'node --import tsx tool.ts', command: cmd(node20, '--import', 'tsx', SOURCE) },
  exe: buildEcho('node20', node20),
});
for (const name of ['node22', 'node24', 'node26']) {
  const node = installedRuntime(name);
  if (node === undefined) {
    log(`  ${name}: not installed (node scripts/runtimes.mjs install ${name})`);
    continue;
  }
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim().slice(1);
  RUNTIMES.push({ name: `Node ${version}`, bare: cmd(node, '-e', '0'), source: { label: 'node tool.ts', command: cmd(node, SOURCE) }, exe: buildEcho(name, node) });
}
const compilers = [
  ['bun', (bin) => cmd(bin, '-e', '0'), (bin) => ({ label: 'bun tool.ts', command: cmd(bin, SOURCE) })],
  ['deno', (bin) => cmd(bin, 'eval', '0'), (bin) => ({ label: 'deno run -A tool.ts', command: cmd(bin, 'run', '-A', SOURCE) })],
];
for (const [name, bare, source] of compilers) {
  const bin = installedRuntime(name);
  if (bin === undefined) {
    log(`  ${name}: not installed (node scripts/runtimes.mjs install ${name})`);
    continue;
  }
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim().split(/\s+/)[name === 'bun' ? 0 : 1];
  const path = `${join(bin, '..')}:${process.env.PATH}`;
  RUNTIMES.push({ name: `${name === 'bun' ? 'Bun' : 'Deno'} ${version}`, bare: bare(bin), source: source(bin), exe: buildEcho(name, node20, ['--runtime', name], { PATH: path }) });
}

const commands = {};
for (const [i, runtime] of RUNTIMES.entries()) {
  commands[`${i}:bare`] = runtime.bare;
  commands[`${i}:source`] = runtime.source.command;
  if (runtime.exe && existsSync(runtime.exe)) commands[`${i}:exe`] = cmd(runtime.exe);
}
// Every tool command gets the same argument; the bare starts get none.
for (const [id, command] of Object.entries(commands)) if (!id.endsWith(':bare')) command.argv.push(ARG);

log(`${Object.keys(commands).length} commands, ${rounds} rounds, alternated:`);
const { samples, digests } = await alternate(commands, rounds, (done, total) => process.stderr.write(`\r  round ${done}/${total}${done === total ? '\n' : ''}`));
const outputs = new Set(Object.entries(digests).filter(([id]) => !id.endsWith(':bare')).map(([, digest]) => digest));
if (outputs.size !== 1) throw new Error(`the echo runs printed different bytes: ${JSON.stringify(digests)}`);

const ms = (id) => median(samples[id].map((s) => s.ms));
const node20Bare = ms('0:bare');
const rows = [];
for (const [i, runtime] of RUNTIMES.entries()) {
  const bare = ms(`${i}:bare`);
  rows.push({ runtime: runtime.name, form: 'bare start', ms: bare, ownBare: 1, node20Bare: bare / node20Bare });
  for (const [form, id] of [[runtime.source.label, `${i}:source`], ['executable', `${i}:exe`]]) {
    if (!(id in samples)) {
      rows.push({ runtime: runtime.name, form, ms: null, ownBare: null, node20Bare: null });
      continue;
    }
    rows.push({ runtime: runtime.name, form, ms: ms(id), ownBare: ms(id) / bare, node20Bare: ms(id) / node20Bare });
  }
}
rmSync(TMP, { recursive: true, force: true });

if (flags.json) {
  process.stdout.write(`${JSON.stringify({ rounds, rows }, null, 2)}\n`);
} else {
  const f = (x, digits = 2) => (x === null ? 'not built' : x.toFixed(digits));
  const lines = ['| runtime | form | median ms | × own bare start | × Node 20 bare start |', '| --- | --- | ---: | ---: | ---: |'];
  for (const row of rows) lines.push(`| ${row.runtime} | ${row.form} | ${f(row.ms, 1)} | ${f(row.ownBare)} | ${f(row.node20Bare)} |`);
  const tools = rows.filter((row) => row.form !== 'bare start' && row.ms !== null).sort((a, b) => a.ms - b.ms);
  lines.push('', `fastest tool start: ${tools[0].runtime} ${tools[0].form}, ${tools[0].node20Bare.toFixed(2)}x Node 20's bare start (${rounds} rounds)`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
