/**
 * A refused argument says what would be accepted, in every consumer: the bridge's isError
 * text, twylt-ai's tool error and `twylt call --validate` print the same issue for each kind
 * of refusal (one field of each kind in the measure fixture, which checks nothing itself).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TwyltCallError, twyltTool, type TwyltAiTool } from 'twylt-ai';
import { startBridge, textOf, type Bridge } from '../support/mcp.js';
import { ROOT } from '../support/process.js';
import { runTwylt } from '../support/twylt-cli.js';

const MEASURE = [process.execPath, `${ROOT}tests/fixtures/mcp/measure.mjs`];
const OK = { value: 1, unit: 'kelvin' };
const CODES = Array.from({ length: 20 }, (_, i) => `"c${String(i).padStart(2, '0')}"`).join(', ');

/** Each kind of refusal: the arguments, and the issue line every consumer must show. */
const CASES: Array<[string, Record<string, unknown>, string]> = [
  ['enum values listed', { ...OK, unit: 'rankine' }, '/unit: must be one of: "celsius", "fahrenheit", "kelvin" (got "rankine")'],
  ['a long enum cut after 20 values', { ...OK, code: 'x' }, `/code: must be one of: ${CODES}, and 10 more (see the schema) (got "x")`],
  ['const', { ...OK, mode: 'fast' }, '/mode: must be "exact" (got "fast")'],
  ['the type expected', { ...OK, value: 'ten' }, '/value: must be an integer (got "ten")'],
  ['a minimum', { ...OK, value: -1 }, '/value: must be at least 0 (got -1)'],
  ['a pattern', { ...OK, label: 'ABC' }, '/label: must match the pattern /^[a-z]+$/ (got "ABC")'],
  ['a maximum length', { ...OK, label: 'abcdefghij' }, '/label: must have at most 8 characters (it has 10)'],
  ['required fields, named together', {}, '/: misses required properties "value", "unit"'],
  ['an unknown property, with the known ones', { ...OK, colour: 'red' }, '/: has unknown property "colour"; the properties are "value", "unit", "mode", "label", "shape", "code", "tag"'],
  [
    'oneOf summarised when no alternative fits',
    { ...OK, shape: { kind: 'triangle' } },
    '/shape: must be one of these: an object with "kind": "circle", required "radius"; an object with "kind": "square", required "side" (got an object)',
  ],
  ['oneOf: the issue of the one alternative that fits', { ...OK, shape: { kind: 'square', side: 0 } }, '/shape/side: must be greater than 0 (got 0)'],
  ['anyOf summarised', { ...OK, tag: true }, '/tag: must be one of these: a string; an integer at most 99 (got true)'],
  ['anyOf: a maximum of the alternative that fits', { ...OK, tag: 100 }, '/tag: must be at most 99 (got 100)'],
];

let bridge: Bridge;
let aiTool: TwyltAiTool;

beforeAll(async () => {
  [bridge, aiTool] = await Promise.all([startBridge(['--', ...MEASURE]), twyltTool(MEASURE)]);
});

afterAll(async () => {
  await bridge?.close();
});

describe.each(CASES)('%s', (_kind, args, issue) => {
  it('twylt-mcp: the isError text the model reads', async () => {
    const result = await bridge.client.callTool({ name: 'measure', arguments: args });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      `Invalid arguments for "measure" (checked against its inputSchema; the tool was not run). Correct them and call it again:\n- ${issue}`,
    );
  });

  it("twylt-ai: the tool error the model reads", async () => {
    const error = await Promise.resolve(aiTool.execute!(args, { toolCallId: 'call-1', messages: [] })).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(TwyltCallError);
    expect((error as TwyltCallError).message).toContain(`\n- ${issue}`);
  });

  it('twylt call --validate: every issue on stderr, exit 1, the tool not run', async () => {
    const run = await runTwylt(['call', '--validate', '--input', JSON.stringify(args), '--', ...MEASURE]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`  • ${issue}\n`);
  });
});
