/**
 * Tool packs at scale: a scan of 100 tools bounded by --jobs, and a bridge starting from a
 * catalog with and without its describe cache. Each measurement alternates with the one it
 * is compared to, round by round, in the same run. See docs/performance.md.
 *
 *   npm run build && node bench/scan.mjs          the default rounds
 *   node bench/scan.mjs --quick                   one round (noisier)
 *   node bench/scan.mjs --tools 100 --sleep-ms 200 --rounds 3 --json
 *
 * The tools are generated into a temporary folder: each a plain Node script that sleeps
 * --sleep-ms before answering a describe (and notes each start of its process in a file),
 * so that a scan's time is set by how many describes run at once. Reported:
 * - scan: wall time of `twylt scan --jobs J` for J = 2 and 8, beside the ideal
 *   ceil(tools / J) x sleep (what a perfect pool of J slots would take, starts not counted);
 * - bridge: time from starting `twylt-mcp --config catalog.json` to its tools/list answer,
 *   and the tool processes it started, with the catalog's describe cache and without it.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { benchFlags, usageError } from './lib/flags.mjs';
import { median } from './lib/measure.mjs';

const ROOT = new URL('..', import.meta.url).pathname;
const TWYLT = join(ROOT, 'packages/twylt/dist/cli/main.js');
const BRIDGE = join(ROOT, 'packages/twylt-mcp/dist/cli.js');
const USAGE = 'usage: node bench/scan.mjs [--quick] [--tools N] [--sleep-ms MS] [--rounds R] [--json]';

const flags = benchFlags(USAGE, { tools: { type: 'string' }, 'sleep-ms': { type: 'string' }, rounds: { type: 'string' } });
const toolCount = Number(flags.tools ?? 100);
const sleepMs = Number(flags['sleep-ms'] ?? 200);
const rounds = Number(flags.rounds ?? (flags.quick ? 1 : 3));
for (const [name, value, max] of [['--tools', toolCount, 1000], ['--sleep-ms', sleepMs, 10_000], ['--rounds', rounds, 20]]) {
  if (!Number.isInteger(value) || value < 1 || value > max) usageError(`${name} takes a whole number from 1 to ${max}`, USAGE);
}
if (!existsSync(TWYLT) || !existsSync(BRIDGE)) usageError('the packages are not built: run npm run build first', USAGE);

const work = mkdtempSync(join(tmpdir(), 'twylt-bench-scan-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const packs = join(work, 'packs');
const starts = join(work, 'starts.log');

// One tool per folder: describe sleeps, a call adds nothing; every start is noted.
const toolSource = (name) => `import { appendFileSync } from 'node:fs';
appendFileSync(process.env.BENCH_STARTS, 'x');
const schema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false };
const input = JSON.parse(process.argv.at(-1));
if (input.describe === 'json_spec') {
  setTimeout(() => console.log(JSON.stringify({ format_version: '1.8', name: '${name}', version: '1.0.0', description: 'bench tool', requirements: { tool: 'npm', format: 'package.json', content: '{}' }, inputSchema: schema, outputSchema: schema, few_shots: [] })), ${sleepMs});
} else console.log(JSON.stringify({ text: input.text }));
`;
for (let i = 0; i < toolCount; i++) {
  const name = `t${String(i).padStart(3, '0')}`;
  mkdirSync(join(packs, 'bench', name), { recursive: true });
  writeFileSync(join(packs, 'bench', name, 'tool.mjs'), toolSource(name));
}
const env = { ...process.env, BENCH_STARTS: starts };
const startCount = () => (existsSync(starts) ? readFileSync(starts, 'utf8').length : 0);

function runScan(args) {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    const child = spawn(process.execPath, [TWYLT, 'scan', packs, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - began) : reject(new Error(`twylt scan ${args.join(' ')} exited with ${code}: ${stderr}`))));
  });
}

async function bridgeStart(catalog) {
  const before = startCount();
  const began = performance.now();
  const transport = new StdioClientTransport({ command: process.execPath, args: [BRIDGE, '--config', catalog], env, stderr: 'ignore' });
  const client = new Client({ name: 'bench-scan', version: '0.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const ms = performance.now() - began;
  await client.close();
  if (tools.length !== toolCount) throw new Error(`the bridge listed ${tools.length} tools, not ${toolCount}`);
  return { ms, starts: startCount() - before };
}

const say = (line) => process.stderr.write(`${line}\n`);
const deadline = Date.now() + 20 * 60_000;
const jobsList = [2, 8];
const scanTimes = new Map(jobsList.map((jobs) => [jobs, []]));
for (let round = 0; round < rounds && Date.now() < deadline; round++) {
  for (const jobs of round % 2 === 0 ? jobsList : [...jobsList].reverse()) {
    scanTimes.get(jobs).push(await runScan(['--jobs', String(jobs), '--timeout', '60000']));
    say(`scan round ${round + 1}: --jobs ${jobs} ${scanTimes.get(jobs).at(-1).toFixed(0)} ms`);
  }
}

const cached = join(work, 'catalog.json');
await runScan(['--write', cached, '--timeout', '60000']);
const uncached = join(work, 'catalog-no-cache.json');
const catalog = JSON.parse(readFileSync(cached, 'utf8'));
for (const entry of catalog.tools) delete entry.describeCache;
writeFileSync(uncached, JSON.stringify(catalog));
const bridge = { cache: [], 'no cache': [] };
for (let round = 0; round < rounds && Date.now() < deadline; round++) {
  for (const [label, file] of round % 2 === 0 ? [['cache', cached], ['no cache', uncached]] : [['no cache', uncached], ['cache', cached]]) {
    bridge[label].push(await bridgeStart(file));
    say(`bridge round ${round + 1}: ${label} ${bridge[label].at(-1).ms.toFixed(0)} ms, ${bridge[label].at(-1).starts} tool starts`);
  }
}

const results = {
  machine: { cpus: cpus().length, node: process.versions.node, loadAverage: Number(loadavg()[0].toFixed(1)) },
  tools: toolCount,
  sleepMs,
  rounds,
  scan: jobsList.map((jobs) => {
    const ms = median(scanTimes.get(jobs));
    const ideal = Math.ceil(toolCount / jobs) * sleepMs;
    return { jobs, medianMs: Math.round(ms), idealMs: ideal, overIdeal: Number((ms / ideal).toFixed(2)) };
  }),
  bridge: Object.entries(bridge).map(([label, runs]) => ({ catalog: label, medianMs: Math.round(median(runs.map((run) => run.ms))), toolStarts: runs.map((run) => run.starts) })),
};
if (flags.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
else {
  const lines = [`${toolCount} tools, describe sleeps ${sleepMs} ms, ${rounds} round(s), ${results.machine.cpus} CPUs (load average ${results.machine.loadAverage} at the end), Node ${results.machine.node}`, ''];
  lines.push('scan        median    ideal   / ideal');
  for (const row of results.scan) lines.push(`--jobs ${String(row.jobs).padEnd(3)} ${String(row.medianMs).padStart(7)} ms ${String(row.idealMs).padStart(6)} ms  ${row.overIdeal.toFixed(2)}x`);
  const [withCache, without] = results.bridge;
  const [two, eight] = results.scan;
  lines.push(`--jobs 2 / --jobs 8: ${(two.medianMs / eight.medianMs).toFixed(2)}x (ideal ${(two.idealMs / eight.idealMs).toFixed(2)}x)`);
  lines.push('', 'bridge start to tools/list   median   tool starts');
  for (const row of results.bridge) lines.push(`${row.catalog.padEnd(28)} ${String(row.medianMs).padStart(6)} ms   ${row.toolStarts.join(', ')}`);
  lines.push(`cache / no cache: ${(withCache.medianMs / without.medianMs).toFixed(2)}x`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
