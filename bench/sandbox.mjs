/**
 * What the sandbox costs (docs/sandbox.md, ADR 0032): tools/call latency through twylt-mcp
 * over stdio, three bridges side by side on the compiled echo example: unsandboxed cold,
 * sandboxed cold (`--sandbox`), sandboxed warm (`--sandbox --warm 2`). Their calls alternate
 * in this one run, so the machine's load falls on all three alike; the verdicts are ratios.
 *
 *   npm run build && node bench/sandbox.mjs [--rounds N] [--json] [--quick]
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { benchFlags, usageError } from './lib/flags.mjs';
import { median } from './lib/measure.mjs';
import { BRIDGE, stdioBridge } from './lib/stdio-bridge.mjs';
import { ROOT } from './prepare.mjs';

const USAGE = 'Usage: node bench/sandbox.mjs [--rounds N] [--json] [--quick]';
const flags = benchFlags(USAGE, { rounds: { type: 'string' } });
const ROUNDS = Number(flags.rounds ?? (flags.quick ? 10 : 40));
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) usageError('--rounds takes a positive integer', USAGE);
const TOOL = join(ROOT, 'build/examples/echo/tool.js');
if (!existsSync(BRIDGE) || !existsSync(TOOL)) usageError(`${BRIDGE} or ${TOOL} is missing: run "npm run build" first`, USAGE);
/** The bounds. */
const COLD_BOUND = 1.15;
const WARM_BOUND = 0.3;
const INPUT = { text: 'hello' };

const bridge = (extra) => stdioBridge([...extra, '--', process.execPath, TOOL], { stderr: 'inherit' });

const bridges = {
  plain: await bridge([]),
  sandboxed: await bridge(['--sandbox']),
  warm: await bridge(['--sandbox', '--warm', '2']),
};
const times = { plain: [], sandboxed: [], warm: [] };
const names = Object.keys(bridges);
// One call of each first, unmeasured: the first spawn starts the keeper, the first sandboxed one fills caches.
for (const name of names) await bridges[name].call(INPUT);
for (let round = 0; round < ROUNDS; round++) {
  // Rotate the order, so that none always runs first after a pause.
  for (let i = 0; i < names.length; i++) {
    const name = names[(round + i) % names.length];
    times[name].push(await bridges[name].call(INPUT));
    // A warm bridge starts its replacement after a call: give it the time a caller would.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  process.stderr.write(`\r  round ${round + 1}/${ROUNDS}`);
}
process.stderr.write('\n');
for (const name of names) await bridges[name].close();

const medians = Object.fromEntries(names.map((name) => [name, median(times[name])]));
const cold = medians.sandboxed / medians.plain;
const warm = medians.warm / medians.sandboxed;
const result = {
  rounds: ROUNDS,
  medianMs: Object.fromEntries(names.map((name) => [name, Math.round(medians[name] * 10) / 10])),
  sandboxedColdOverPlain: Math.round(cold * 100) / 100,
  sandboxedWarmOverSandboxedCold: Math.round(warm * 100) / 100,
  coldWithinBound: cold <= COLD_BOUND,
  warmWithinBound: warm <= WARM_BOUND,
};
if (flags.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
else {
  process.stdout.write(`echo (compiled) through twylt-mcp, median of ${ROUNDS} alternated rounds:
  unsandboxed cold   ${result.medianMs.plain} ms
  sandboxed cold     ${result.medianMs.sandboxed} ms   ${result.sandboxedColdOverPlain}x unsandboxed (bound ${COLD_BOUND}x: ${result.coldWithinBound ? 'within' : 'OVER'})
  sandboxed warm     ${result.medianMs.warm} ms   ${result.sandboxedWarmOverSandboxedCold}x sandboxed cold (bound ${WARM_BOUND}x: ${result.warmWithinBound ? 'within' : 'OVER'})
`);
}
