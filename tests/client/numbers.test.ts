/**
 * A foreign tool's numbers reach every consumer as the tool wrote them: the Python fixture
 * prints integers beyond 2^53, `1e-07`, `1.0` and `1e+16`, which JSON.parse and
 * JSON.stringify would change.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { JsonNumber, TRANSPORTS, TwyltClient, parseJson } from '../../packages/twylt/src/client/index.js';
import { fixture } from '../support/process.js';
import { runTwylt } from '../support/twylt-cli.js';
import { NO_PYTHON_REASON, noPython, pythonNumbersTool } from '../support/python.js';

const BIG = '98765432109876543210';

describe.skipIf(noPython)(`a Python tool's numbers, through the client (${noPython ? NO_PYTHON_REASON : 'python3'})`, () => {
  const client = new TwyltClient(pythonNumbersTool());

  for (const transport of TRANSPORTS) {
    it(`keeps every value, and the exact text beside it (${transport})`, async () => {
      const result = await client.call({ n: new JsonNumber(BIG) }, { transport });
      const output = result.output as Record<string, unknown>;
      expect(output.echo).toEqual(new JsonNumber(BIG));
      expect(output.modified_ns).toEqual(new JsonNumber('1796084204906049009'));
      expect((output.modified_ns as JsonNumber).toBigInt()).toBe(1796084204906049009n);
      expect(output.negative).toEqual(new JsonNumber('-1796084204906049009'));
      // Values a double holds exactly stay plain numbers, whatever their spelling.
      expect(output).toMatchObject({ tenth: 0.1, tiny: 1e-7, whole: 1, large: 1e16, third: 1 / 3, small_int: 42 });
      expect(result.text).toContain('"modified_ns": 1796084204906049009,\n');
      expect(JSON.stringify(output)).toContain('"modified_ns":1796084204906049009,"negative":-1796084204906049009,"beyond_64_bits":123456789012345678901234567890');
    });
  }

  it('with text fidelity, writes the output back byte for byte', async () => {
    const result = await client.call({ n: new JsonNumber('-1e-07') }, { numbers: 'text' });
    expect(`${JSON.stringify(result.output, null, 2)}\n`).toBe(result.text);
    expect(result.text).toContain('"echo": -1e-07,');
    expect(result.text).toContain('"whole": 1.0,');
    expect(result.text).toContain('"large": 1e+16,');
  });

  it('validates exact outputs against the published schema', async () => {
    const result = await client.call({ n: 1 }, { validate: true });
    expect((result.output as { modified_ns: unknown }).modified_ns).toBeInstanceOf(JsonNumber);
  });
});

describe.skipIf(noPython)(`a Python tool's numbers, through twylt call (${noPython ? NO_PYTHON_REASON : 'python3'})`, () => {
  it('prints the tool’s numbers unchanged, and passes typed numbers through unchanged', async () => {
    const direct = await runTwylt(['call', '--input', `{"n": ${BIG}}`, '--', ...pythonNumbersTool()]);
    expect(direct.stderr).toBe('');
    expect(direct.code).toBe(0);
    const tool = await import('node:child_process').then(({ execFileSync }) => execFileSync(pythonNumbersTool()[0]!, [pythonNumbersTool()[1]!, `{"n": ${BIG}}`], { encoding: 'utf8' }));
    expect(direct.stdout).toBe(tool);
  });

  it('--json prints the same numbers compactly', async () => {
    const result = await runTwylt(['call', '--json', '--transport', 'stdin', '--', ...pythonNumbersTool()], { stdin: '{"n": 1.50}' });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      '{"echo":1.5,"modified_ns":1796084204906049009,"negative":-1796084204906049009,"beyond_64_bits":123456789012345678901234567890,' +
        '"tenth":0.1,"tiny":1e-07,"whole":1.0,"large":1e+16,"third":0.3333333333333333,"small_int":42}\n',
    );
  });
});

/** JSON number texts: any sign, up to 25 integer digits, fractions with trailing zeros, any exponent. */
const numberText = fc
  .tuple(
    fc.constantFrom('', '-'),
    fc.oneof(fc.constant('0'), fc.tuple(fc.integer({ min: 1, max: 9 }), fc.stringMatching(/^\d{0,24}$/)).map(([a, b]) => `${a}${b}`)),
    fc.option(fc.stringMatching(/^\d{1,20}$/), { nil: undefined }),
    fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.stringMatching(/^\d{1,3}$/)), { nil: undefined }),
  )
  .map(([sign, int, fraction, exponent]) => `${sign}${int}${fraction === undefined ? '' : `.${fraction}`}${exponent ? exponent.join('') : ''}`);

describe('parseJson', () => {
  it('text fidelity: writing the value again gives every number’s text back', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(numberText, fc.string().map((s) => JSON.stringify(s))), { maxLength: 8 }), (items) => {
        const text = `[${items.join(',')}]`;
        expect(JSON.stringify(parseJson(text, 'text'))).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it('value fidelity: a plain number only where it holds the value exactly', () => {
    fc.assert(
      fc.property(numberText, (text) => {
        const [value] = parseJson(`[${text}]`) as unknown[];
        if (value instanceof JsonNumber) {
          expect(value.text).toBe(text);
          return;
        }
        expect(value).toBe(Number(text));
        expect(Number.isFinite(value)).toBe(true);
        if (/^-?\d+$/.test(text)) expect(BigInt(value as number)).toBe(BigInt(text));
        if (value === 0) expect(/[1-9]/.test(text.replace(/[eE].*$/, ''))).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('parses like JSON.parse otherwise, and refuses what JSON.parse refuses', () => {
    const text = '{"a": [1, 2.5, "1e400", {"b": null, "c": true}], "d": "\\u00e9"}';
    expect(parseJson(text)).toEqual(JSON.parse(text));
    expect(parseJson(text, 'text')).toEqual(JSON.parse(text));
    expect(() => parseJson('{"a": 1e400,}')).toThrow(SyntaxError);
    expect(() => new JsonNumber('1.')).toThrow(SyntaxError);
  });
});

describe('integers beyond 2^53 that a caller holds as JavaScript numbers', () => {
  // A Zod tool that echoes the integer field inner.a as inner_a and the z.json() field extra.
  const client = new TwyltClient(fixture('py_shapes_twin'));
  const input = { name: 'a', headers: {}, extra: [2 ** 60, -(2 ** 64)], inner: { a: 2 ** 60 } };

  for (const transport of TRANSPORTS) {
    it(`go to the tool with their exact digits, which it accepts and echoes (${transport})`, async () => {
      // JSON.stringify would write 2^60 as 1152921504606847000: another integer, which a tool
      // with exact integers reads as such, and a TypeScript tool refuses (InexactInteger).
      const result = await client.call(input, { transport });
      expect(result.text).toContain('"inner_a": 1152921504606846976');
      expect(result.text).toContain('-18446744073709551616');
      expect((result.output as { inner_a: unknown }).inner_a).toEqual(new JsonNumber('1152921504606846976'));
    });
  }

  it('go with their exact digits beside JsonNumbers, which keep theirs', async () => {
    const result = await client.call({ ...input, extra: [2 ** 60, new JsonNumber('18446744073709551616')] });
    expect(result.text).toContain('1152921504606846976,\n    18446744073709551616\n');
  });
});
