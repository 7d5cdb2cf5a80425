/**
 * The text of a result (docs/TWYLT.md section 2): formatResult writes plain JSON without a
 * replacer (the fast path) and everything else through its strict replacer. Whichever path
 * a value takes, the outcome must be the one the rule gives: JSON indented by 2, or a
 * TypeError for what plain JSON.stringify would silently change.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatResult } from '../../packages/twylt/src/protocol/render.js';
import { FC } from './support.js';

/**
 * Integers beyond 2^53 are written with their exact digits (ADR 0021; 1e21 and up keep the
 * exponent form of any float): the replacer marks them with a nonce no generated string can
 * hold, and the marks are swapped for the digits afterwards.
 */
const MARK = `exact-${randomUUID()}:`;
function markExact(boxed: unknown): unknown {
  const item = boxed instanceof Number ? boxed.valueOf() : boxed;
  return typeof item === 'number' && Number.isInteger(item) && !Number.isSafeInteger(item) && Math.abs(item) < 1e21 ? `${MARK}${BigInt(item)}` : boxed;
}
function unmark(text: string): string {
  return text.replace(new RegExp(`"${MARK}(-?\\d+)"`, 'g'), '$1');
}

/** The rule, written once more on its own: JSON.stringify with a replacer refusing what JSON cannot carry. */
function expected(value: unknown): { text: string } | { error: string } {
  const refuse = function (this: unknown, _key: string, item: unknown): unknown {
    const inArray = Array.isArray(this);
    if (typeof item === 'number' && !Number.isFinite(item)) throw new TypeError('number');
    if (typeof item === 'function' || typeof item === 'symbol') throw new TypeError('function or symbol');
    if (item === undefined && inArray) throw new TypeError('undefined in an array');
    return markExact(item);
  };
  try {
    const text = JSON.stringify(value, refuse, 2) as string | undefined;
    return text === undefined ? { error: 'nothing' } : { text: unmark(text) };
  } catch (error) {
    return { error: (error as Error).constructor.name };
  }
}

function actual(value: unknown): { text: string } | { error: string } {
  try {
    return { text: formatResult(value) };
  } catch (error) {
    return { error: (error as Error).constructor.name };
  }
}

/** Same text, or both refused (a TypeError from the rule is a TypeError from formatResult). */
function agree(value: unknown): void {
  const want = expected(value);
  const got = actual(value);
  if ('text' in want) expect(got).toEqual(want);
  else expect('error' in got, `formatResult wrote ${JSON.stringify(got)}`).toBe(true);
}

describe('formatResult', () => {
  it('agrees with the rule on any value: boxed, null-prototype, sparse, NaN, undefined, functions, dates', () => {
    const anything = fc.anything({
      maxDepth: 4,
      withBoxedValues: true,
      withNullPrototype: true,
      withSparseArray: true,
      withDate: true,
      withObjectString: true,
      withTypedArray: true,
      withBigInt: true,
      withMap: true,
      withSet: true,
      values: [fc.double(), fc.constantFrom(undefined, () => 1, Symbol('s'), NaN, Infinity, -0)],
    });
    fc.assert(fc.property(anything, agree), { seed: FC.seed, numRuns: FC.inProcess * 10 });
  });
  it('plain JSON comes out exactly as JSON.stringify indents it, integers beyond 2^53 with their digits', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        expect(formatResult(value)).toBe(unmark(JSON.stringify(value, (_key, item: unknown) => markExact(item), 2)));
      }),
      { seed: FC.seed, numRuns: FC.inProcess * 10 },
    );
  });
  it('refuses what hides deep in an otherwise plain value, and takes toJSON, cycles and depth to the strict path', () => {
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 5000; i++) at = (at.a = {}) as Record<string, unknown>;
    const cycle: Record<string, unknown> = { list: [1, 2] };
    (cycle.list as unknown[]).push(cycle);
    for (const value of [
      { items: [{ id: 1 }, { id: 2, score: NaN }] },
      { items: [1, undefined, 3] },
      // biome-ignore lint/suspicious/noSparseArray: a hole is the case under test
      { items: [1, , 3] },
      { nested: { fn: () => 1 } },
      { nested: { when: new Date(0) } },
      { nested: { own: { toJSON: () => 'custom' } } },
      { nested: Object.assign([1], { toJSON: () => NaN }) },
      { skipped: undefined, kept: 1 },
      cycle,
      deep,
    ]) {
      agree(value);
    }
  });
  it('reads a throwing getter as the strict path does: the error surfaces', () => {
    const hostile = { ok: 1, get bad(): number { throw new Error('getter'); } };
    expect(() => formatResult(hostile)).toThrow('getter');
  });
});
