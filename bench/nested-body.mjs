/**
 * How long one hostile request body holds `twylt-mcp --http`'s event loop: a body of about
 * 4 MB nested millions of levels deep (`[[[[...]]]]`), against a flat body of the same size
 * (one long string) in the same run, alternating. While each is being answered, a health
 * check (`GET /healthz`, which runs nothing) is sent; its latency is the time the server
 * could answer no one else. Loopback only; bounded in rounds and in time. See
 * docs/robustness.md.
 *
 *   npm run build && node bench/nested-body.mjs
 *   node bench/nested-body.mjs --rounds 10 --max-seconds 120
 *   node bench/nested-body.mjs --json
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BRIDGE, startBridge } from './lib/bridge.mjs';
import { benchFlags, usageError } from './lib/flags.mjs';
import { median } from './lib/measure.mjs';

const ROOT = new URL('..', import.meta.url).pathname;
const USAGE = 'usage: node bench/nested-body.mjs [--quick] [--rounds R] [--max-seconds S] [--json]';
const flags = benchFlags(USAGE, { rounds: { type: 'string' }, 'max-seconds': { type: 'string' } });
const rounds = Number(flags.rounds ?? (flags.quick ? 3 : 8));
const maxSeconds = Number(flags['max-seconds'] ?? 300);
if (!Number.isInteger(rounds) || rounds < 1 || !Number.isInteger(maxSeconds) || maxSeconds < 1) usageError('--rounds and --max-seconds take positive whole numbers', USAGE);

const TOOL = [process.execPath, join(ROOT, 'build/examples/echo/tool.js')];
for (const file of [BRIDGE, TOOL[1]]) {
  if (!existsSync(file)) {
    process.stderr.write(`${file} is missing: run npm run build first\n`);
    process.exit(1);
  }
}

const DEPTH = 2_000_000;
const BODIES = {
  flat: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(2 * DEPTH - 200) } } }),
  nested: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}}}`,
};
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const bridge = await startBridge(['--', ...TOOL]);
const url = bridge.url;
const health = url.replace(/\/mcp$/, '/healthz');

/** POST `body`; once its last byte is sent, time a health check. */
async function measure(body) {
  const started = performance.now();
  const answer = fetch(url, { method: 'POST', headers: HEADERS, body }).then(async (response) => ({ status: response.status, text: await response.text() }));
  // The body is a few MB over loopback: let it arrive, then ask how long the server needs to answer anyone.
  await new Promise((resolve) => setTimeout(resolve, 30));
  const asked = performance.now();
  await fetch(health).then((response) => response.text());
  const stall = performance.now() - asked;
  const { status } = await answer;
  return { stall, answered: performance.now() - started, status };
}

const results = { flat: [], nested: [] };
const deadline = Date.now() + maxSeconds * 1000;
for (let at = 0; at < rounds && Date.now() < deadline; at++) {
  for (const kind of at % 2 === 0 ? ['flat', 'nested'] : ['nested', 'flat']) results[kind].push(await measure(BODIES[kind]));
  process.stderr.write(`round ${at + 1}/${rounds}\r`);
}
await bridge.stop();

const row = (kind) => ({
  kind,
  bytes: BODIES[kind].length,
  status: [...new Set(results[kind].map((r) => r.status))].join(','),
  healthMs: Math.round(median(results[kind].map((r) => r.stall))),
  answerMs: Math.round(median(results[kind].map((r) => r.answered))),
});
const rows = [row('flat'), row('nested')];
const ratio = rows[1].healthMs / Math.max(rows[0].healthMs, 1);
if (flags.json) {
  process.stdout.write(`${JSON.stringify({ rounds: results.flat.length, rows, nestedOverFlat: ratio }, null, 2)}\n`);
} else {
  process.stdout.write(`\n${results.flat.length} rounds, medians\nbody    bytes     status  health check (ms)  answer (ms)\n`);
  for (const r of rows) process.stdout.write(`${r.kind.padEnd(8)}${String(r.bytes).padEnd(10)}${r.status.padEnd(8)}${String(r.healthMs).padEnd(19)}${r.answerMs}\n`);
  process.stdout.write(`nested / flat, health check: ${ratio.toFixed(2)}x\n`);
}
