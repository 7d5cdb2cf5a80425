/** Hostile values in the input (issue 8): each has a test that fails if its guarantee breaks. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorOf, example, run } from '../support/process.js';
import { expectProtocolOutcome, FC, robustFixture, runInProcess, scratchDir } from './support.js';
import { echoJson, echoZod, jsonInteger, nested } from './tools.js';

const zodEcho = robustFixture('echo_zod');
const jsonEcho = robustFixture('echo_json');
const ECHOES = [
  ['zod', zodEcho],
  ['json-schema', jsonEcho],
] as const;

const nest = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const transportFault = (r: Awaited<ReturnType<typeof run>>) => {
  expect(r.code).toBe(4);
  const error = errorOf(r);
  expect(error).toMatchObject({ type: 'protocol_error', stage: 'transport' });
  return error.exception as { type: string; message: string };
};

describe('__proto__, constructor and prototype keys', () => {
  it('are unknown fields at the top level, in both schema kinds', async () => {
    const payload = '{"text": "a", "__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 1}}, "prototype": 1}';
    for (const tool of [example('echo'), example('echo_json_schema')]) {
      const r = await run([...tool, payload]);
      expect(r.code).toBe(2);
      expect(errorOf(r).errors).toEqual([
        { path: '__proto__', code: 'unknown_field', message: 'Unknown field', value: { polluted: 1 } },
        { path: 'constructor', code: 'unknown_field', message: 'Unknown field', value: { prototype: { polluted: 1 } } },
        { path: 'prototype', code: 'unknown_field', message: 'Unknown field', value: 1 },
      ]);
    }
  });
  it('are unknown fields at any depth, and pollute nothing', async () => {
    const r = await runInProcess(nested, { argv: ['{"point": {"x": 1, "tags": [{"label": "a", "__proto__": {"polluted": 1}}], "constructor": {"prototype": {"polluted": 1}}}}'] });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr).error.errors.map((i: { path: string; code: string }) => [i.path, i.code])).toEqual([
      ['point.tags[0].__proto__', 'unknown_field'],
      ['point.constructor', 'unknown_field'],
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
  it('a "__proto__" key inside an open value survives the round trip (json-schema)', async () => {
    const payload = '{"value": {"__proto__": {"polluted": 1}, "a": 1}}';
    const r = await runInProcess(echoJson, { argv: [payload] });
    expect(r.code).toBe(0);
    expect(Object.keys(JSON.parse(r.stdout).value)).toEqual(['__proto__', 'a']);
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
  // z.json() is any JSON value: the closed copy checks nothing inside it, so nothing copies it
  // by assignment (Zod's own z.json() dropped the key; ADR 0015).
  it('a "__proto__" key inside an open value survives the round trip (zod)', async () => {
    const payload = '{"value": {"__proto__": {"polluted": 1}, "a": 1}}';
    const r = await runInProcess(echoZod, { argv: [payload] });
    expect(r.code).toBe(0);
    expect(Object.keys(JSON.parse(r.stdout).value)).toEqual(['__proto__', 'a']);
  });
});

describe('nesting', () => {
  it('100 000 levels deep is a clear transport error on stdin, input.json and the CLI', async () => {
    for (const [, tool] of ECHOES) {
      const deep = `{"value": ${nest(100_000)}}`;
      expect(transportFault(await run(tool, { input: deep })).type).toBe('InputTooDeep');
      const dir = scratchDir();
      writeFileSync(join(dir, 'input.json'), `{"value": ${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`);
      expect(transportFault(await run(tool, { cwd: dir })).type).toBe('InputTooDeep');
      // One argument is at most 128 KiB on Linux.
      expect(transportFault(await run([...tool, `{"value": ${nest(60_000)}}`])).message).toBe('The JSON on the command-line argument is nested deeper than 1000 levels');
    }
  });
  it('1000 levels (the limit) still work, in both schema kinds; 1001 do not', async () => {
    for (const [, tool] of ECHOES) {
      const atLimit = `{"value": ${nest(999)}}`;
      const r = await run(tool, { input: atLimit });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(JSON.parse(atLimit));
      expect(transportFault(await run(tool, { input: `{"value": ${nest(1000)}}` })).type).toBe('InputTooDeep');
    }
  });
  it('a deep unknown value does not break the error report', async () => {
    const r = await run(example('echo_json_schema'), { input: `{"text": "a", "extra": ${nest(999)}}` });
    expect(r.code).toBe(2);
    const issue = errorOf(r).errors[0];
    expect(issue).toMatchObject({ path: 'extra', code: 'unknown_field' });
    expect(JSON.stringify(issue.value)).toContain('"[Too deep]"');
  });
});

describe('size', () => {
  it('a 50 MB string goes through stdin and comes back whole', async () => {
    const text = 'é'.repeat(25 * 1024 * 1024); // 50 MB of UTF-8
    const r = await run(jsonEcho, { input: JSON.stringify({ value: text }), timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(0, 300)).toBe(0);
    expect(JSON.parse(r.stdout).value === text).toBe(true);
  });
  it('a 10 MB string in input.json comes back whole in output.json', async () => {
    const dir = scratchDir();
    const text = 'x'.repeat(10 * 1024 * 1024);
    writeFileSync(join(dir, 'input.json'), JSON.stringify({ value: text }));
    const r = await run(zodEcho, { cwd: dir, timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(0, 300)).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'output.json'), 'utf8')).value === text).toBe(true);
  });
  it('a huge array (1 000 000 items) comes back whole', async () => {
    const value = Array.from({ length: 1_000_000 }, (_, i) => i % 7);
    const r = await run(jsonEcho, { input: JSON.stringify({ value }), timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(0, 300)).toBe(0);
    expect(JSON.parse(r.stdout).value).toEqual(value);
  });
});

describe('text', () => {
  it('escaped lone surrogates are accepted and written back as valid JSON escapes', async () => {
    for (const [, tool] of ECHOES) {
      const r = await run([...tool, '{"value": ["\\ud800", "\\udfff", "a\\ud83dz"]}']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('"\\ud800"');
      expect(JSON.parse(r.stdout).value).toEqual(['\ud800', '\udfff', 'a\ud83dz']);
    }
  });
  it('invalid UTF-8 on stdin and in input.json is a transport error', async () => {
    for (const bytes of [Buffer.from('{"value": "\xff"}', 'latin1'), Buffer.from([0x7b, 0x22, 0x76, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d])]) {
      expect(transportFault(await run(jsonEcho, { input: bytes }))).toEqual({ type: 'InvalidEncoding', message: 'stdin is not valid UTF-8' });
      const dir = scratchDir();
      writeFileSync(join(dir, 'input.json'), bytes);
      expect(transportFault(await run(jsonEcho, { cwd: dir }))).toEqual({ type: 'InvalidEncoding', message: 'input.json is not valid UTF-8' });
    }
  });
  it('invalid UTF-8 in argv reaches the tool as U+FFFD (Node decodes argv before any code runs)', () => {
    // spawnSync with a latin1 Buffer is not possible for argv; a shell passes the raw byte.
    const r = spawnSync('sh', ['-c', `exec "$0" "$1" "$(printf '{"value": "\\377"}')"`, ...jsonEcho], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).value).toBe('\ufffd');
  });
  it('a byte order mark is a transport error that says so, on every transport', async () => {
    const bom = '\ufeff{"value": 1}';
    const expected = (where: string) => ({ type: 'InvalidJSON', message: `Malformed JSON on ${where}: it starts with a byte order mark (BOM)` });
    expect(transportFault(await run([...jsonEcho, bom]))).toEqual(expected('the command-line argument'));
    expect(transportFault(await run(jsonEcho, { input: bom }))).toEqual(expected('stdin'));
    const dir = scratchDir();
    writeFileSync(join(dir, 'input.json'), bom);
    expect(transportFault(await run(jsonEcho, { cwd: dir }))).toEqual(expected('input.json'));
  });
  it('control characters: escaped ones round-trip, raw ones in a string are malformed JSON', async () => {
    const value = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('') + '\u007f\u2028\u2029';
    const r = await run(zodEcho, { input: JSON.stringify({ value }) });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).value).toBe(value);
    expect(transportFault(await run(zodEcho, { input: '{"value": "a\u0001b"}' })).type).toBe('InvalidJSON');
  });
  it('control characters and newlines in unknown keys keep the error on one line', async () => {
    const r = await run(example('echo'), { input: JSON.stringify({ text: 'a', 'line\nbreak\u0000\u001b[31m': 1 }) });
    expect(r.code).toBe(2);
    expect(errorOf(r).errors[0]).toMatchObject({ path: 'line\nbreak\u0000\u001b[31m', code: 'unknown_field' });
  });
  it('empty key names are ordinary keys', async () => {
    const r = await run(jsonEcho, { input: '{"value": {"": 1, "a": {"": [""]}}}' });
    expect(JSON.parse(r.stdout).value).toEqual({ '': 1, a: { '': [''] } });
    const unknown = await run(example('echo'), { input: '{"text": "a", "": 1}' });
    expect(errorOf(unknown).errors).toEqual([{ path: '', code: 'unknown_field', message: 'Unknown field', value: 1 }]);
  });
});

describe('duplicate keys', () => {
  it('the last one wins, as in the reference (JSON.parse and Python json agree)', async () => {
    const r = await run(jsonEcho, { input: '{"value": 1, "value": {"a": 1, "a": 2}}' });
    expect(JSON.parse(r.stdout)).toEqual({ value: { a: 2 } });
  });
});

describe('numbers', () => {
  it('beyond double range (1e400, -1e400, 400 digits) is a transport error naming the path, never Infinity', async () => {
    for (const [, tool] of ECHOES) {
      for (const number of ['1e400', '-1e400', '9'.repeat(400)]) {
        const error = transportFault(await run([...tool, `{"value": {"list": [0, ${number}]}}`]));
        expect(error).toEqual({ type: 'NumberOutOfRange', message: 'The JSON on the command-line argument has a number at value.list[1] beyond the range of a 64-bit float' });
      }
    }
    const dir = scratchDir();
    writeFileSync(join(dir, 'input.json'), '1e400');
    expect(transportFault(await run(jsonEcho, { cwd: dir })).message).toContain('has a number at <root>');
  });
  // ADR 0021: an integer a double cannot hold is refused, never rounded to another one; the
  // integers a double holds (2^53, 2^60) pass exactly, as ADR 0015 publishes, and floats are doubles.
  it('beyond 2^53, an integer a double cannot hold is a transport error naming the path (Zod, JSON Schema, free-form values)', async () => {
    const refused = (where: string, path: string) => ({
      type: 'InexactInteger',
      message:
        `The JSON on ${where} has the integer 9007199254740993 at ${path}, which a JavaScript number cannot hold exactly ` +
        '(numbers are 64-bit floats: integers beyond 2^53 lose digits, this one would become 9007199254740992); ' +
        'send it as a string, or use a tool runtime with exact integers',
    });
    const hostile = await run(robustFixture('hostile'), { input: '{"action": "ok", "ms": 9007199254740993}' });
    expect(transportFault(hostile)).toEqual(refused('stdin', 'ms'));
    for (const [, tool] of ECHOES) {
      expect(transportFault(await run([...tool, '{"value": {"ids": [1, 9007199254740993]}}']))).toEqual(refused('the command-line argument', 'value.ids[1]'));
    }
    const json = await runInProcess(jsonInteger, { argv: ['{"n": 9007199254740993}'] });
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stderr).error.exception).toEqual(refused('the command-line argument', 'n'));
  });
  it('beyond 2^53, integers a double holds pass exactly, and floats are doubles', async () => {
    const echoed = await run(zodEcho, { input: '{"value": [9007199254740992, 1152921504606846976, -100000000000000000000, 1e308, 5e-324, 1e-400, 9007199254740993.0, "9007199254740993"]}' });
    expect(echoed).toMatchObject({ code: 0, stderr: '' });
    expect(echoed.stdout.replace(/\s+/g, '')).toBe('{"value":[9007199254740992,1152921504606846976,-100000000000000000000,1e+308,5e-324,0,9007199254740992,"9007199254740993"]}');
    for (const n of ['9007199254740992', '1152921504606846976', '-1152921504606846976']) {
      const json = await runInProcess(jsonInteger, { argv: [`{"n": ${n}}`] });
      expect(json).toMatchObject({ code: 0, stdout: `{\n  "n": ${n}\n}\n` });
    }
  });
  // Any integer literal: echoed with its own digits (or, from 1e21, as the same double), or refused.
  it('any integer literal is echoed as the same integer or refused as InexactInteger, never changed', async () => {
    const exactDouble = fc.tuple(fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }), fc.integer({ min: 0, max: 120 })).map(([m, k]) => m << BigInt(k));
    const nearBoundary = fc.tuple(fc.constantFrom(2n ** 53n, 2n ** 60n, 10n ** 17n, 2n ** 64n), fc.bigInt({ min: -4n, max: 4n }), fc.boolean()).map(([b, d, neg]) => (neg ? -(b + d) : b + d));
    const literal = fc.oneof(exactDouble, nearBoundary, fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n })).map(String);
    await fc.assert(
      // Spaces before the literal move it across the 16-character probe of the scan.
      fc.asyncProperty(literal, fc.constantFrom(echoZod, echoJson), fc.nat(20), async (text, tool, pad) => {
        const r = await runInProcess(tool, { argv: [`{"value": [${' '.repeat(pad)}${text}]}`] });
        const exact = BigInt(Number(text)) === BigInt(text);
        if (!exact) {
          expect(r.code).toBe(4);
          expect(JSON.parse(r.stderr).error.exception).toMatchObject({ type: 'InexactInteger', message: expect.stringContaining(` ${text} at value[0],`) });
          return;
        }
        expect(r.code).toBe(0);
        const echoed = /\[\s*(\S+)\s*\]/.exec(r.stdout)![1]!;
        if (Math.abs(Number(text)) < 1e21) expect(echoed).toBe(text);
        else expect(BigInt(Number(echoed))).toBe(BigInt(text));
      }),
      { seed: FC.seed, numRuns: FC.inProcess },
    );
  });
  it('NaN and Infinity tokens are malformed JSON', async () => {
    for (const token of ['NaN', 'Infinity', '-Infinity']) {
      expect(transportFault(await run(jsonEcho, { input: `{"value": ${token}}` })).type).toBe('InvalidJSON');
    }
  });
});

describe('in-process, the same guarantees', () => {
  it('deep nesting and out-of-range numbers end in one error object', async () => {
    for (const tool of [echoZod, echoJson]) {
      for (const stdin of [`{"value": ${nest(100_000)}}`, '{"value": 1e999}']) {
        const outcome = expectProtocolOutcome(await runInProcess(tool, { stdin }));
        expect(outcome.ok).toBe(false);
      }
    }
  });
});
