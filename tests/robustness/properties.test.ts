/**
 * Property tests over the run loop (issue 8): whatever arrives on the command line, stdin or
 * input.json, a run ends with exit 0 and the result, or a protocol exit code and exactly one
 * error object on stderr, never a stack trace. In-process through `runWith` for many runs,
 * then through real processes for fewer. Knobs: TWYLT_FC_RUNS, TWYLT_FC_SEED (support.ts).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Property runs through real processes take their time on a loaded 2-core machine.
const SLOW = 240_000;
import { run } from '../support/process.js';
import { expectProtocolOutcome, FC, robustFixture, runInProcess, scratchDir, type Outcome } from './support.js';
import { withExactIntegers } from '../../packages/twylt/src/protocol/integers.js';
import { echoJson, echoZod, isServiceText } from './tools.js';

const TOOLS = { zod: echoZod, 'json-schema': echoJson } as const;
const FIXTURES = { zod: 'echo_zod', 'json-schema': 'echo_json' } as const;

// --- arbitraries -----------------------------------------------------------------------------

/** Any code point, and now and then a lone surrogate (well-formed generators never make one). */
const unit = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
);
const hostileKey = fc.oneof(
  fc.string({ unit, maxLength: 8 }),
  fc.constantFrom('value', 'describe', '__proto__', 'constructor', 'prototype', '', 'toString', '\u0000', 'a.b', '[0]'),
);
const describeValue = fc.constantFrom('brief', 'schema', 'json_spec', 'few_shots', 'requirements', 'BRIEF', ' brief', '', null, 1, ['brief'], {});
const jsonValue = fc.jsonValue({ maxDepth: 4, stringUnit: unit });
const payloadObject = fc.dictionary(hostileKey, fc.oneof(jsonValue, describeValue), { maxKeys: 4 });
/** Text that is JSON of any kind, an object payload, broken JSON, or no JSON at all. */
const payloadText = fc.oneof(
  payloadObject.map((o) => JSON.stringify(o)),
  fc.record({ value: jsonValue }).map((o) => JSON.stringify(o)),
  jsonValue.map((v) => JSON.stringify(v)),
  payloadObject.map((o) => JSON.stringify(o).slice(0, -1)),
  fc.constantFrom('{', '{"value": 1e400}', '{"value": NaN}', "{'a': 1}", '{"a": 1,}', '{"a":1}{"b":2}', '\uFEFF{}', '{"value":"\\ud800"}', ' \t\n{}'),
  fc.string({ unit, maxLength: 40 }),
);
const payloadBytes = fc.oneof(
  payloadText.map((t) => Buffer.from(t, 'utf8')),
  fc.uint8Array({ maxLength: 48 }).map((b) => Buffer.from(b)),
  fc.constantFrom(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), Buffer.from('{"value":"\xff"}', 'latin1'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.alloc(0)),
);
/** argv without --debug and --error-format human, which change the oracle. */
const arg = fc.oneof(payloadText, fc.constantFrom('-h', '--help', '--version', '-v', '--error-format=json', '--error-format=xml', '--error-format', '-'), fc.string({ maxLength: 8 }))
  .filter((a) => a !== '--debug' && !/^--error-format(=\s*human\s*)?$/i.test(a.trim()) || a === '--error-format');
const argv = fc.array(arg, { maxLength: 3 }).filter((args) => {
  // `--error-format human` as two arguments would switch to human mode.
  const i = args.indexOf('--error-format');
  return i === -1 || !/^\s*human\s*$/i.test(args[i + 1] ?? '');
});
const describeEnv = fc.option(fc.constantFrom('brief', 'schema', 'json_spec', 'few_shots', 'requirements', 'nope', ''), { nil: undefined });

const safeJson = jsonValue.filter((v) => !JSON.stringify(v).includes('"__proto__"'));
/**
 * A payload's text with every number written exactly. JSON.stringify writes the double 2^60 as
 * 1152921504606847000, which names another integer: the run refuses that (ADR 0021).
 */
const payloadOf = (value: unknown) => withExactIntegers(JSON.stringify({ value }));

// --- the properties --------------------------------------------------------------------------

const prototypeNames = Object.getOwnPropertyNames(Object.prototype).sort();

/**
 * The file-mode part of the oracle: an output.json only after a file-mode success (exit 0,
 * nothing on stdout), and then valid JSON; never a temporary file left behind.
 */
function expectFileOutcome(dir: string, r: Outcome): void {
  const left = readdirSync(dir).filter((name) => name !== 'input.json');
  if (left.includes('output.json')) {
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    JSON.parse(readFileSync(join(dir, 'output.json'), 'utf8'));
  }
  expect(left.filter((name) => name !== 'output.json')).toEqual([]);
}

for (const [kind, tool] of Object.entries(TOOLS)) {
  describe(`in-process, ${kind} contract`, () => {
    it('any argv, stdin, input.json and INPUT_DESCRIBE: a protocol outcome', async () => {
      await fc.assert(
        fc.asyncProperty(argv, fc.option(payloadBytes, { nil: undefined }), fc.option(payloadBytes, { nil: undefined }), describeEnv, async (args, stdin, file, describeMode) => {
          const dir = scratchDir();
          if (file) writeFileSync(join(dir, 'input.json'), file);
          const r = await runInProcess(tool, { argv: args, stdin, cwd: dir, env: describeMode === undefined ? {} : { INPUT_DESCRIBE: describeMode } });
          expectProtocolOutcome(r, { textOk: isServiceText });
          expectFileOutcome(dir, r);
        }),
        { numRuns: FC.inProcess, seed: FC.seed },
      );
    }, SLOW);

    it('any JSON value in a valid payload comes back unchanged, over every transport', async () => {
      await fc.assert(
        fc.asyncProperty(safeJson, fc.constantFrom('cli', 'stdin', 'file'), async (value, transport) => {
          const text = payloadOf(value);
          const dir = scratchDir();
          if (transport === 'file') writeFileSync(join(dir, 'input.json'), text);
          const r = await runInProcess(tool, { argv: transport === 'cli' ? [text] : [], stdin: transport === 'stdin' ? text : undefined, cwd: dir });
          const outcome = expectProtocolOutcome(r);
          expect(outcome.ok, r.stderr).toBe(true);
          const result = transport === 'file' ? JSON.parse(readFileSync(join(dir, 'output.json'), 'utf8')) : (outcome as { value: unknown }).value;
          expect(result).toEqual(JSON.parse(text));
        }),
        { numRuns: FC.inProcess, seed: FC.seed },
      );
    }, SLOW);
  });
}

describe('no prototype pollution from any payload', () => {
  beforeAll(() => expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeNames));
  it('hostile keys at any depth leave Object.prototype as it was', async () => {
    const polluting = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.constant({ polluted: true }),
        fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'prototype', 'value', 'point', 'x'), tie('node'), { maxKeys: 3 }),
        fc.array(tie('node'), { maxLength: 2 }),
      ),
    })).node;
    await fc.assert(
      fc.asyncProperty(polluting, fc.constantFrom(...Object.values(TOOLS)), async (node, tool) => {
        const text = JSON.stringify({ value: node, __proto__x: 1 }).replaceAll('__proto__x', '__proto__');
        expectProtocolOutcome(await runInProcess(tool, { argv: [text] }));
        expectProtocolOutcome(await runInProcess(tool, { stdin: JSON.stringify({ value: node }) }));
      }),
      { numRuns: FC.inProcess, seed: FC.seed },
    );
  });
  afterAll(() => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeNames);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

for (const [kind, name] of Object.entries(FIXTURES)) {
  describe(`real processes, ${kind} contract`, () => {
    const tool = robustFixture(name);
    it('any argv: a protocol outcome', async () => {
      await fc.assert(
        // A NUL cannot be passed in argv.
        fc.asyncProperty(argv.filter((args) => args.every((a) => !a.includes('\u0000'))), async (args) => {
          expectProtocolOutcome(await run([...tool, ...args], { cwd: scratchDir() }), { textOk: isServiceText });
        }),
        { numRuns: FC.processes, seed: FC.seed },
      );
    }, SLOW);
    it('any bytes on stdin: a protocol outcome', async () => {
      await fc.assert(
        fc.asyncProperty(payloadBytes, async (bytes) => {
          expectProtocolOutcome(await run(tool, { input: bytes, cwd: scratchDir() }), { textOk: isServiceText });
        }),
        { numRuns: FC.processes, seed: FC.seed },
      );
    }, SLOW);
    it('any bytes in input.json: a protocol outcome, output.json only on success', async () => {
      await fc.assert(
        fc.asyncProperty(payloadBytes, async (bytes) => {
          const dir = scratchDir();
          writeFileSync(join(dir, 'input.json'), bytes);
          writeFileSync(join(dir, 'output.json'), 'stale');
          const r = await run(tool, { cwd: dir });
          expectProtocolOutcome(r);
          expectFileOutcome(dir, r);
          // File mode: the stale output.json is gone unless this run wrote a new one.
          expect(existsSync(join(dir, 'output.json'))).toBe(r.code === 0);
        }),
        { numRuns: FC.processes, seed: FC.seed },
      );
    }, SLOW);
    it('any JSON value comes back unchanged through a real process', async () => {
      await fc.assert(
        fc.asyncProperty(safeJson, async (value) => {
          const r = await run(tool, { input: payloadOf(value) });
          const outcome = expectProtocolOutcome(r);
          expect(outcome).toEqual({ ok: true, value: JSON.parse(JSON.stringify({ value })) });
        }),
        { numRuns: FC.processes, seed: FC.seed },
      );
    }, SLOW);
  });
}
