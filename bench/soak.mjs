/**
 * Soak: `twylt-mcp --http` on 127.0.0.1 with warm processes, under mixed traffic for M
 * minutes, then SIGTERM (ADR 0026, docs/robustness.md). Bounded in time (--minutes) and in
 * count (--max-calls), loopback only.
 *
 *   npm run soak -- --minutes 30          (builds first)
 *   node bench/soak.mjs --minutes 1 --clients 4 --json
 *
 * Traffic, from C clients at once: valid calls, invalid input, tools that fail, crash
 * (SIGKILL themselves), hang into their time-out, flood stdout beyond the limit, and clients
 * that disconnect mid-call or cancel it (notifications/cancelled). Every call carries a unique
 * id, which the tool appends to a log when its business code runs: a call run twice, or run
 * without being sent, is a duplicate; a call without its answer is lost.
 *
 * Sampled every few seconds: the bridge's RSS and heap (after a GC), open descriptors, live
 * child processes and zombies. Idle before the traffic and idle after it, each must end
 * where it started, within the bounds printed. Exit 0 when every bound holds, 1 otherwise.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchFlags, usageError } from './lib/flags.mjs';

const USAGE = 'Usage: node bench/soak.mjs [--minutes M] [--clients C] [--max-calls N] [--warm W] [--json]';
const flags = benchFlags(USAGE, { minutes: { type: 'string' }, clients: { type: 'string' }, 'max-calls': { type: 'string' }, warm: { type: 'string' } });
const MINUTES = Number(flags.minutes ?? 1);
const CLIENTS = Number(flags.clients ?? 4);
const MAX_CALLS = Number(flags['max-calls'] ?? 200_000);
const WARM = Number(flags.warm ?? 2);
for (const [name, value] of [['--minutes', MINUTES], ['--clients', CLIENTS], ['--max-calls', MAX_CALLS]]) {
  if (!(value > 0) || !Number.isFinite(value)) usageError(`${name} needs a positive number`, USAGE);
}

const ROOT = new URL('..', import.meta.url).pathname;
const BRIDGE = join(ROOT, 'packages/twylt-mcp/dist/cli.js');
const TOOL = [process.execPath, join(ROOT, 'bench/tools/soak_tool.mjs')];
/** Long enough for a tool to start and crash on a loaded machine; the hanging calls wait it out. */
const TIMEOUT_MS = 3000;
const SAMPLE_MS = 3000;
/** The bounds: end (idle) against start (idle). */
const BOUNDS = { rssMiB: 64, heapMiB: 8, fds: 4, children: 0, zombies: 0 };
const MiB = 1024 * 1024;

const work = mkdtempSync(join(tmpdir(), 'twylt-soak-'));
const ranLog = join(work, 'ran.log');
const log = (line) => process.stderr.write(`soak: ${line}\n`);

// ---- the bridge ---------------------------------------------------------------------------
const args = [
  '--expose-gc',
  '--import',
  pathToFileURL(join(ROOT, 'bench/lib/heap-report.mjs')).href,
  BRIDGE,
  '--http',
  '127.0.0.1:0',
  '--warm',
  String(WARM),
  '--timeout',
  String(TIMEOUT_MS),
  '--max-output-bytes',
  String(64 * 1024),
  '--max-concurrency',
  String(CLIENTS),
  '--grace-ms',
  '3000',
  '--',
  ...TOOL,
];
const bridge = spawn(process.execPath, args, { cwd: work, env: { ...process.env, SOAK_RAN_LOG: ranLog }, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
const exited = new Promise((resolve) => bridge.once('exit', (code, signal) => resolve({ code, signal })));
let stderrTail = '';
const url = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`the bridge did not listen within 30 s:\n${stderrTail}`)), 30_000);
  bridge.stderr.on('data', (chunk) => {
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4000);
    const match = /twylt-mcp: listening on (http:\/\/\S+)\n/.exec(stderrTail);
    if (match) {
      clearTimeout(timer);
      resolve(match[1]);
    }
  });
  void exited.then(() => reject(new Error(`the bridge ended before listening:\n${stderrTail}`)));
});
log(`bridge ${bridge.pid} at ${url}, ${WARM} warm, ${CLIENTS} clients, ${MINUTES} min`);

// ---- sampling -----------------------------------------------------------------------------
/** Every process below `pid`, with its state letter (Linux /proc). */
function descendants(pid) {
  let children = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => [{ pid: child, state: stateOf(child) }, ...descendants(child)]);
}
function statOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}
const stateOf = (pid) => statOf(pid)?.[0] ?? 'gone';
/** A process is the one seen before only if it started at the same time: pids are reused. */
const startOf = (pid) => statOf(pid)?.[19];
const seen = new Map();
function heapAndRss() {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ heapUsed: Number.NaN, rss: Number.NaN }), 5000);
    bridge.once('message', (message) => {
      clearTimeout(timer);
      resolve(message);
    });
    bridge.send('sample');
  });
}
async function sample() {
  const { heapUsed, rss } = await heapAndRss();
  const family = descendants(bridge.pid);
  for (const { pid } of family) {
    // One already gone between the listing and its stat is not recorded: it left nothing.
    const start = startOf(pid);
    if (start !== undefined && !seen.has(pid)) seen.set(pid, start);
  }
  let fds = Number.NaN;
  try {
    fds = readdirSync(`/proc/${bridge.pid}/fd`).length;
  } catch {
    // gone
  }
  return { at: Math.round(performance.now() - began), rssMiB: rss / MiB, heapMiB: heapUsed / MiB, fds, children: family.filter((p) => p.state !== 'Z').length, zombies: family.filter((p) => p.state === 'Z').length };
}
const began = performance.now();
const idle = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- traffic ------------------------------------------------------------------------------
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
/** POST one JSON-RPC message; resolves with the answer's message (or undefined) and the status. */
function post(body, { headers = {}, abortAfterMs } = {}) {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', headers: { ...HEADERS, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        const line = text.split('\n').find((l) => l.startsWith('data: ')) ?? (text.startsWith('{') ? `data: ${text}` : undefined);
        let message;
        try {
          message = line ? JSON.parse(line.slice(6)) : undefined;
        } catch {
          message = undefined;
        }
        resolve({ status: res.statusCode, message });
      });
      res.on('error', () => resolve({ status: res.statusCode, error: 'response error' }));
    });
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', (error) => resolve({ error: error.message }));
    req.end(JSON.stringify(body));
    if (abortAfterMs !== undefined) setTimeout(() => req.destroy(new Error('disconnected on purpose')), abortAfterMs);
  });
}
const call = (rpcId, id, action, options) => post({ jsonrpc: '2.0', id: rpcId, method: 'tools/call', params: { name: 'soak', arguments: { id, action } } }, options);

/** Each kind: what it sends, and the outcome its answer must have (undefined: no answer awaited). */
const MIX = ['ok', 'ok', 'ok', 'ok', 'ok', 'invalid', 'fail', 'crash', 'hang', 'flood', 'disconnect', 'cancel'];
const EXPECT = { ok: 'ok', invalid: /Invalid arguments/, fail: /failed on request/, crash: /SIGKILL|killed/i, hang: /time-out|timed out|timeout/i, flood: /limit|too large|more than/i };
const outcomes = {};
const sent = new Map();
let issued = 0;
const problems = [];
const deadline = Date.now() + MINUTES * 60_000;

async function client(c) {
  for (let n = 0; Date.now() < deadline && issued < MAX_CALLS; n++) {
    issued++;
    const kind = MIX[(n + c) % MIX.length];
    const id = `c${c}-${n}`;
    sent.set(id, kind);
    let answer;
    if (kind === 'disconnect') answer = await call(n, id, 'slow', { abortAfterMs: 100 });
    else if (kind === 'cancel') {
      const session = `soak-${c}`;
      const pending = call(n, id, 'slow', { headers: { 'mcp-session-id': session } });
      await idle(100);
      await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: n, reason: 'soak' } }, { headers: { 'mcp-session-id': session } });
      answer = await pending;
    } else answer = await call(n, id, kind === 'invalid' ? 'explode' : kind);
    const outcome = classify(kind, id, answer);
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
}

function classify(kind, id, answer) {
  if (kind === 'disconnect') return 'disconnected';
  if (kind === 'cancel') return 'cancelled';
  const result = answer.message?.result;
  if (!result) {
    problems.push(`${id} (${kind}) got no answer: ${answer.error ?? `status ${answer.status}`}`);
    return 'lost';
  }
  const text = result.content?.[0]?.text ?? '';
  if (kind === 'ok') {
    if (!result.isError && result.structuredContent?.id === id) return 'ok';
  } else if (result.isError && EXPECT[kind].test(text)) {
    return { invalid: 'invalid_input', fail: 'tool_failed', crash: 'tool_crashed', hang: 'timed_out', flood: 'output_too_large' }[kind];
  }
  problems.push(`${id} (${kind}) got an unexpected answer: ${text.slice(0, 200)}`);
  return 'unexpected';
}

// ---- the run ------------------------------------------------------------------------------
await idle(SAMPLE_MS);
const start = await sample();
const samples = [start];
let sampling = true;
const sampler = (async () => {
  while (sampling) {
    await idle(SAMPLE_MS);
    if (sampling) samples.push(await sample());
  }
})();
await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
sampling = false;
await sampler;
// Idle again: calls cut off by a disconnect end with their processes; replacements load.
await idle(SAMPLE_MS * 2);
const end = await sample();
samples.push(end);

// Lost and duplicated, from the tool's own log of the calls it ran.
const ranCount = new Map();
for (const id of readFileSync(ranLog, 'utf8').split('\n').filter(Boolean)) ranCount.set(id, (ranCount.get(id) ?? 0) + 1);
let duplicated = 0;
let lost = outcomes.lost ?? 0;
for (const [id, count] of ranCount) {
  if (count > 1 || !sent.has(id)) {
    duplicated++;
    problems.push(`${id} ran ${count} times${sent.has(id) ? '' : ' and was never sent'}`);
  }
}
for (const [id, kind] of sent) {
  const ran = ranCount.get(id) ?? 0;
  const must = kind === 'invalid' ? 0 : kind === 'disconnect' || kind === 'cancel' ? undefined : 1;
  if (must !== undefined && ran !== must) {
    if (ran < must) lost++;
    problems.push(`${id} (${kind}) ran ${ran} times, not ${must}`);
  }
}

// SIGTERM: the bridge ends, and with it every process it ever had.
bridge.kill('SIGTERM');
const stopped = await Promise.race([exited, idle(30_000).then(() => undefined)]);
if (!stopped) {
  problems.push('the bridge did not end within 30 s of SIGTERM');
  bridge.kill('SIGKILL');
}
await idle(1000);
const left = [...seen].filter(([pid, start]) => startOf(pid) === start && stateOf(pid) !== 'Z').map(([pid]) => pid);
if (left.length > 0) problems.push(`processes left after the bridge ended: ${left.join(', ')}`);
rmSync(work, { recursive: true, force: true });

const growth = {
  rssMiB: end.rssMiB - start.rssMiB,
  heapMiB: end.heapMiB - start.heapMiB,
  fds: end.fds - start.fds,
  children: end.children - start.children,
  zombies: end.zombies,
};
for (const [key, bound] of Object.entries(BOUNDS)) {
  if (!(growth[key] <= bound)) problems.push(`${key} grew by ${growth[key].toFixed?.(1) ?? growth[key]} (bound ${bound})`);
}
if (duplicated > 0 || lost > 0 || (outcomes.unexpected ?? 0) > 0) problems.push(`lost ${lost}, duplicated ${duplicated}, unexpected ${outcomes.unexpected ?? 0}`);
if (stopped && stopped.code !== 143) problems.push(`the bridge ended with ${JSON.stringify(stopped)} after SIGTERM, not exit 143`);

const report = {
  minutes: MINUTES,
  clients: CLIENTS,
  warm: WARM,
  calls: issued,
  outcomes,
  lost,
  duplicated,
  start,
  end,
  growth,
  bounds: BOUNDS,
  peak: {
    rssMiB: Math.max(...samples.map((s) => s.rssMiB)),
    heapMiB: Math.max(...samples.map((s) => s.heapMiB)),
    fds: Math.max(...samples.map((s) => s.fds)),
    children: Math.max(...samples.map((s) => s.children)),
  },
  samples: samples.length,
  processesSeen: seen.size,
  processesLeft: left.length,
  exit: stopped ?? null,
  problems,
};
if (flags.json) process.stdout.write(`${JSON.stringify(report)}\n`);
else {
  const f = (value) => (Number.isInteger(value) ? String(value) : value.toFixed(1));
  process.stdout.write(`soak: ${issued} calls in ${MINUTES} min from ${CLIENTS} clients, --warm ${WARM}\n`);
  process.stdout.write(`outcomes: ${Object.entries(outcomes).map(([k, v]) => `${k} ${v}`).join(', ')}\n`);
  process.stdout.write(`lost ${lost}, duplicated ${duplicated}; processes seen ${seen.size}, left ${left.length}; exit ${JSON.stringify(stopped)}\n`);
  process.stdout.write('| | start | end | growth | bound | peak |\n|---|---|---|---|---|---|\n');
  for (const key of ['rssMiB', 'heapMiB', 'fds', 'children', 'zombies']) {
    process.stdout.write(`| ${key} | ${f(start[key])} | ${f(end[key])} | ${f(growth[key])} | ${BOUNDS[key]} | ${report.peak[key] === undefined ? '' : f(report.peak[key])} |\n`);
  }
  for (const problem of problems.slice(0, 20)) process.stdout.write(`problem: ${problem}\n`);
}
process.exitCode = problems.length === 0 ? 0 : 1;
