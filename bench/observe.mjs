/**
 * What observing costs a call (ADR 0033): tools/call through twylt-mcp over stdio, one bridge
 * with metrics (`--metrics`) and traces (OTEL_* to an OTLP/HTTP receiver in this process) on,
 * one with both off, their calls alternating in this one run so the machine's load falls on
 * both alike. Cold calls, then warm ones (`--warm 2`), where the bridge's own share is largest.
 *
 *   npm run build && node bench/observe.mjs [--rounds N] [--json] [--quick]
 */
import { createServer } from 'node:http';
import { join } from 'node:path';
import { benchFlags } from './lib/flags.mjs';
import { median } from './lib/measure.mjs';
import { stdioBridge } from './lib/stdio-bridge.mjs';
import { ROOT } from './prepare.mjs';

const USAGE = 'Usage: node bench/observe.mjs [--rounds N] [--json] [--quick]';
const flags = benchFlags(USAGE, { rounds: { type: 'string' } });
const ROUNDS = Number(flags.rounds ?? (flags.quick ? 20 : 100));
const ECHO = [process.execPath, join(ROOT, 'build/examples/echo/tool.js')];
const INPUT = { text: 'hello' };

// The OTLP receiver: counts what it gets, as a collector would accept it.
let exported = 0;
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    exported++;
    response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const OTEL = { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.address().port}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' };

/** A bridge serving the echo example; OTEL_* only as `env` gives them. */
function bridge(extra, env) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  return stdioBridge([...extra, '--', ...ECHO], { env: { ...clean, ...env } });
}

const rows = [];
for (const [label, extra] of [
  ['cold', []],
  ['warm (--warm 2)', ['--warm', '2']],
]) {
  const off = await bridge(extra, {});
  const on = await bridge([...extra, '--metrics', '127.0.0.1:0'], OTEL);
  const paths = [
    ['off', off],
    ['on', on],
  ];
  for (const [, path] of paths) await path.call(INPUT); // a first call each, and a check
  const samples = { off: [], on: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < 2; k++) {
      const [id, path] = paths[(k + round) % 2];
      samples[id].push(await path.call(INPUT));
    }
  }
  await off.close();
  await on.close();
  rows.push({ calls: label, off: median(samples.off), on: median(samples.on), ratio: median(samples.on) / median(samples.off) });
}
receiver.close();

if (flags.json) {
  process.stdout.write(`${JSON.stringify({ rounds: ROUNDS, exports: exported, rows })}\n`);
} else {
  process.stdout.write(`tools/call of the compiled echo through twylt-mcp (stdio), ${ROUNDS} calls each, alternating; ${exported} OTLP exports received\n\n`);
  process.stdout.write('| calls | p50, both off | p50, metrics + traces on | on/off |\n|---|---|---|---|\n');
  for (const row of rows) process.stdout.write(`| ${row.calls} | ${row.off.toFixed(2)} ms | ${row.on.toFixed(2)} ms | ${row.ratio.toFixed(3)}x |\n`);
}
