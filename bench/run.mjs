/**
 * The benchmark suite: every row against its floor, measured in the same run with the
 * commands alternated, reported as medians and ratios. See docs/performance.md.
 *
 *   npm run bench                       build, then the default rounds
 *   node bench/run.mjs --quick          a short run (noisier)
 *   node bench/run.mjs --runs 40 --payload-runs 10 --consumer-runs 50
 *   node bench/run.mjs --json           machine-readable results on stdout
 *   node bench/run.mjs --only startup   one part: startup, executable, payload, consumer or exact-json
 */
import { execFileSync } from 'node:child_process';
import { cpus, freemem, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchFlags, usageError } from './lib/flags.mjs';
import { alternate, executable, median, node } from './lib/measure.mjs';
import { PAYLOADS, ROOT, SMALL_INPUT, prepare } from './prepare.mjs';

const USAGE = `usage: node bench/run.mjs [--quick] [--runs N] [--payload-runs N] [--consumer-runs N]
                         [--only startup|executable|payload|consumer|exact-json]... [--json]
Every row against its floor, measured in the same run; see docs/performance.md.`;
const flags = benchFlags(USAGE, {
  runs: { type: 'string' },
  'payload-runs': { type: 'string' },
  'consumer-runs': { type: 'string' },
  only: { type: 'string', multiple: true },
});
const rounds = {
  startup: Number(flags.runs ?? (flags.quick ? 5 : 15)),
  payload: Number(flags['payload-runs'] ?? (flags.quick ? 2 : 5)),
  consumer: Number(flags['consumer-runs'] ?? (flags.quick ? 10 : 30)),
};
const PARTS = ['startup', 'executable', 'payload', 'consumer', 'exact-json'];
const parts = flags.only ?? PARTS;
const wrong = [
  ...parts.filter((part) => !PARTS.includes(part)).map((part) => `--only ${part}: not one of ${PARTS.join(', ')}`),
  ...Object.entries(rounds).filter(([, n]) => !Number.isInteger(n) || n < 1).map(([part]) => `the ${part} rounds must be a positive integer`),
];
if (wrong.length > 0) usageError(wrong.join('\n'), USAGE);
const log = (text) => process.stderr.write(`${text}\n`);
const progress = (name) => (done, total) => process.stderr.write(`\r  ${name}: round ${done}/${total}${done === total ? '\n' : ''}`);

const ARG = JSON.stringify(SMALL_INPUT);
const DESCRIBE = '{"describe": "json_spec"}';
const PRINT = `process.stdout.write(JSON.stringify(${ARG}, null, 2) + '\\n')`;
const example = (name) => join(ROOT, 'build/examples', name, 'tool.js');

const env = await prepare({ payloads: parts.includes('payload'), modules: parts.includes('startup') || parts.includes('executable'), snapshots: parts.includes('executable') });
const stdinSmall = join(env.small, 'input.json');
const results = [];

/** The four calls of one tool: CLI argument, stdin, file mode, describe json_spec. */
function callsOf(launch) {
  return {
    cli: launch([ARG]),
    stdin: launch([], { stdin: stdinSmall }),
    file: launch([], { cwd: env.small, output: join(env.small, 'output.json') }),
    describe: launch([DESCRIBE]),
  };
}

/** How each kind of built tool is started. */
const launchers = {
  file: (file) => (args, options) => node([file, ...args], options),
  executable: (file) => (args, options) => executable(file, args, options),
  // `--`: with no script, Node would otherwise read a leading option of the tool as its own.
  blob: (file) => (args, options) => node(['--snapshot-blob', file, '--', ...args], options),
};

/** The floors every start-up row is measured against; a part measures the ones it names. */
function floorCommands() {
  return {
    bare: node(['-e', PRINT]),
    zod: node([join(ROOT, 'bench/floors/zod-parse.mjs')]),
    zodBundled: node([env.zodBundled]),
    esm: node([join(ROOT, 'bench/floors/esm-print.mjs')]),
    ...(env.snapshot?.executable ? { seaPrint: executable(env.snapshot.executable, []) } : {}),
    ...(env.snapshot?.blob ? { blobPrint: node(['--snapshot-blob', env.snapshot.blob]) } : {}),
  };
}
const FLOOR_ROWS = {
  esm: 'floor: node ESM file (prints the same line)',
  zod: 'floor: node importing zod, one parse',
  zodBundled: 'floor: the same, bundled into one minified file',
  seaPrint: 'floor: a single executable whose snapshot prints the same line',
  blobPrint: 'floor: the same snapshot, node --snapshot-blob',
};
const floorLabel = { bare: 'node -e', zod: 'node + zod parse', esm: 'node ESM file', zodBundled: 'bundled zod', seaPrint: 'snapshot executable', blobPrint: 'snapshot blob' };

async function startup() {
  await startupPart('startup', ['esm', 'zod', 'zodBundled'], [
    { id: 'echo', label: 'echo (Zod)', file: example('echo'), floor: 'zod', call: 1.1, describe: null, also: 'bare' },
    { id: 'echo_json_schema', label: 'echo (plain JSON Schema)', file: example('echo_json_schema'), floor: 'bare', call: 1.25, describe: 1.25 },
    ...['echo', 'echo_json_schema'].map((id) => ({ id: `built:${id}`, label: `built ${id}.mjs`, ...env.built[id], floor: 'bare', call: 1.15, describe: 1.1, also: id === 'echo' ? 'zodBundled' : undefined })),
  ]);
}

/**
 * The echo as an executable and as a snapshot blob, each also against a snapshot that only
 * prints (what Node's own start from a snapshot costs), with the built .mjs in the same
 * rounds for comparison. A part of its own: fewer commands per round, so a round is short
 * and the machine's drift falls on all of them alike.
 */
async function executablePart() {
  await startupPart('executable', ['zodBundled', 'seaPrint', 'blobPrint'], [
    { id: 'built:echo', label: 'built echo.mjs', ...env.built.echo, floor: 'bare', call: 1.15, describe: 1.1, also: 'zodBundled' },
    { id: 'exe:echo', label: 'echo (Zod) executable, --executable', ...env.built['echo executable'], launch: 'executable', floor: 'bare', call: 1.1, describe: 1.05, also: 'seaPrint' },
    { id: 'blob:echo', label: 'echo (Zod) node --snapshot-blob', ...env.built['echo snapshot blob'], launch: 'blob', floor: 'bare', call: null, describe: null, also: 'blobPrint' },
  ]);
}

/** One part of start-up rows: `node -e` and the named floors, then the four calls of each tool, alternated. */
async function startupPart(part, floorIds, tools) {
  log(`${part} (${rounds.startup} rounds)`);
  const floors = floorCommands();
  const commands = { bare: floors.bare };
  for (const id of floorIds) if (floors[id]) commands[id] = floors[id];
  for (const tool of tools.filter((t) => t.file)) {
    for (const [kind, command] of Object.entries(callsOf(launchers[tool.launch ?? 'file'](tool.file)))) commands[`${tool.id}/${kind}`] = command;
  }
  const { samples, digests } = await alternate(commands, rounds.startup, progress(part));
  const ms = (id) => median(samples[id].map((s) => s.ms));
  const rssMiB = (id) => median(samples[id].map((s) => s.rssKiB)) / 1024;
  /** Peak memory beside the time, against the floor's in the same run. */
  const memory = (id, floor) => ({ rssMiB: rssMiB(id), floorRssMiB: rssMiB(floor), rssRatio: rssMiB(id) / rssMiB(floor) });
  const against = (id, floor) => ({ floor: floorLabel[floor], floorMs: ms(floor), ratio: ms(id) / ms(floor), ...memory(id, floor) });
  results.push({ part, row: 'floor: node -e (prints the same line)', ms: ms('bare'), rssMiB: rssMiB('bare') });
  for (const id of floorIds) if (samples[id]) results.push({ part, row: FLOOR_ROWS[id], ms: ms(id), ...against(id, 'bare') });
  for (const tool of tools) {
    for (const kind of ['cli', 'stdin', 'file', 'describe']) {
      const row = `${tool.label}: ${kind === 'describe' ? 'describe json_spec' : `call, ${kind}`}`;
      const target = kind === 'describe' ? tool.describe : tool.call;
      if (!tool.file) {
        results.push({ part, row, unavailable: tool.unavailable });
        continue;
      }
      const id = `${tool.id}/${kind}`;
      const entry = { part, row, ms: ms(id), ...against(id, tool.floor), target };
      // A second floor beside the first: bare node for the Zod tool (the issue's), bundled Zod
      // for a built Zod tool (it cannot start before its Zod has), the snapshot that only
      // prints for a snapshot (what Node's start from one costs).
      if (tool.also && samples[tool.also]) entry.also = { label: floorLabel[tool.also], ratio: ms(id) / ms(tool.also) };
      if (kind !== 'describe' && kind !== 'file' && digests[id] !== digests.bare) entry.mismatch = `output differs from the floor's: ${digests[id]} vs ${digests.bare}`;
      results.push(entry);
    }
  }
}

/** What a build costs: its duration (one build, made by prepare) and the size of what it writes. */
function buildCost() {
  const module = env.built.echo;
  if (!module.file) return;
  const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(bytes < 2 ** 20 ? 2 : 1)} MiB`;
  results.push({ part: 'build', row: `twylt build echo.mjs (${mib(module.bytes)})`, ms: module.buildMs });
  for (const [id, label] of [['echo executable', 'twylt build --executable echo'], ['echo snapshot blob', 'twylt build --snapshot-blob echo']]) {
    const built = env.built[id];
    if (built.unavailable) results.push({ part: 'build', row: label, unavailable: built.unavailable });
    else results.push({ part: 'build', row: `${label} (${mib(built.bytes)})`, ms: built.buildMs, floor: 'build of echo.mjs', floorMs: module.buildMs, ratio: built.buildMs / module.buildMs });
  }
}

async function payload() {
  for (const [id, spec] of Object.entries(PAYLOADS)) {
    const dir = env.large[id];
    const input = join(dir, 'input.json');
    const output = join(dir, 'output.json');
    const tool = join(ROOT, spec.tool);
    const floor = join(ROOT, 'bench/floors/parse-stringify.mjs');
    for (const transport of ['stdin', 'file']) {
      const commands = transport === 'stdin'
        ? { tool: node([tool], { stdin: input }), floor: node([floor, 'stdin'], { stdin: input }) }
        : { tool: node([tool], { cwd: dir, output }), floor: node([floor, 'file'], { cwd: dir, output }) };
      log(`${spec.label} through ${transport} (${rounds.payload} rounds)`);
      const { samples, digests } = await alternate(commands, rounds.payload, progress(`${id} ${transport}`));
      const ms = (k) => median(samples[k].map((s) => s.ms));
      const rss = (k) => median(samples[k].map((s) => s.rssKiB));
      results.push({
        part: 'payload',
        row: `${spec.label} through ${transport === 'file' ? 'input.json' : 'stdin'}`,
        ms: ms('tool'),
        floor: 'read, parse, stringify, write',
        floorMs: ms('floor'),
        ratio: ms('tool') / ms('floor'),
        target: 1.5,
        rssMiB: rss('tool') / 1024,
        floorRssMiB: rss('floor') / 1024,
        rssRatio: rss('tool') / rss('floor'),
        rssTarget: 2,
        ...(digests.tool !== digests.floor ? { mismatch: `output differs from the floor's: ${digests.tool} vs ${digests.floor}` } : {}),
      });
    }
  }
}

/** What exact numbers cost a consumer's parse (ADR 0009), against JSON.parse of the same text. */
function exactJson() {
  log(`exact numbers in a consumer's parse (${rounds.consumer} rounds)`);
  const out = JSON.parse(execFileSync(process.execPath, [join(ROOT, 'bench/exact-json.mjs'), String(rounds.consumer)], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
  for (const row of out.rows) results.push({ part: 'exact-json', row: row.row, ms: row.ms, floor: 'JSON.parse', floorMs: row.floorMs, ratio: row.ms / row.floorMs });
}

async function consumer() {
  log(`consumer calls (${rounds.consumer} rounds)`);
  const bridge = join(ROOT, 'packages/twylt-mcp/dist/cli.js');
  const out = JSON.parse(execFileSync(process.execPath, [join(ROOT, 'bench/consumer.mjs'), String(rounds.consumer), example('echo'), bridge], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
  const direct = median(out.direct.samples);
  results.push({ part: 'consumer', row: 'floor: direct spawn of echo, parse stdout', ms: direct });
  for (const [id, label] of [['client', 'call through twylt/client'], ['mcp', 'call through twylt-mcp (MCP tools/call)']]) {
    const row = out[id];
    if (row.unavailable) results.push({ part: 'consumer', row: label, unavailable: row.unavailable });
    else results.push({ part: 'consumer', row: label, ms: median(row.samples), floor: 'direct spawn', floorMs: direct, ratio: median(row.samples) / direct });
  }
}

if (parts.includes('startup')) await startup();
if (parts.includes('executable')) {
  buildCost();
  await executablePart();
}
if (parts.includes('payload')) await payload();
if (parts.includes('consumer')) await consumer();
if (parts.includes('exact-json')) exactJson();

const machine = {
  cpu: `${cpus()[0]?.model ?? 'unknown'} x ${cpus().length}`,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  freeMemoryGiB: Math.round(freemem() / 2 ** 30),
  os: `${platform()} ${release()}`,
  node: process.version,
};
const command = `node bench/run.mjs ${process.argv.slice(2).join(' ')}`.trim();

if (flags.json) {
  process.stdout.write(`${JSON.stringify({ machine, command, rounds, date: new Date().toISOString(), results }, null, 2)}\n`);
} else {
  process.stdout.write(table(results));
  process.stdout.write(`\n${machine.cpu}, ${machine.memoryGiB} GiB, ${machine.os}, node ${machine.node}; ${command}; rounds ${JSON.stringify(rounds)}\n`);
}
if (results.some((r) => r.mismatch)) {
  for (const r of results.filter((x) => x.mismatch)) log(`MISMATCH ${r.row}: ${r.mismatch}`);
  process.exitCode = 1;
}

/** A Markdown table, so the output pastes into docs/performance.md as is. */
function table(rows) {
  const fix = (n, digits = 0) => (n === null || n === undefined ? '' : n.toFixed(digits));
  const verdict = (ratio, target) => (target ? `${ratio <= target ? 'met' : 'MISSED'} (<= ${target.toFixed(2)}x)` : '');
  const lines = [
    '| part | row | median ms | floor | floor ms | ratio | target | peak RSS MiB (floor) | RSS ratio | RSS target |',
    '|---|---|---:|---|---:|---:|---|---:|---:|---|',
  ];
  for (const r of rows) {
    if (r.unavailable) {
      lines.push(`| ${r.part} | ${r.row} | ${r.unavailable} | | | | | | | |`);
      continue;
    }
    const ratio = r.ratio === undefined ? '' : `${fix(r.ratio, 2)}x${r.also ? ` (${fix(r.also.ratio, 2)}x ${r.also.label})` : ''}`;
    const rss = r.rssMiB === undefined ? '' : `${fix(r.rssMiB)}${r.floorRssMiB === undefined ? '' : ` (${fix(r.floorRssMiB)})`}`;
    lines.push(
      `| ${r.part} | ${r.row} | ${fix(r.ms)} | ${r.floor ?? ''} | ${fix(r.floorMs)} | ${ratio} | ${r.ratio === undefined ? '' : verdict(r.ratio, r.target)} | ${rss} | ${r.rssRatio === undefined ? '' : `${fix(r.rssRatio, 2)}x`} | ${r.rssTarget ? verdict(r.rssRatio, r.rssTarget) : ''} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
