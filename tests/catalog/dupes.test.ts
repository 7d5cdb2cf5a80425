/**
 * One name published by tools of two categories (issue 30, item 12): `twylt scan` fails both,
 * each naming the other's file, and `--write` makes no catalog that holds a name twice.
 * (scan.test.ts covers two tools of one category.)
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NO_PYTHON_REASON, noPython } from '../support/python.js';
import { PACKS, scan, scanJson, scratch } from './support.js';

const dir = scratch('dupes');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Each folder scanned is a category of its own: "one" and "two".
const ONE = join(PACKS, 'dupes/one');
const TWO = join(PACKS, 'dupes/two');
const COUNT = join(PACKS, 'loose/text/count');

describe.skipIf(noPython)(`one name in two categories${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  it('fails both tools, each naming the other, and exits 1', async () => {
    const { code, rows } = await scanJson([ONE, TWO]);
    expect(code).toBe(1);
    expect([...rows.values()].map((row) => [row.category, row.name, row.status])).toEqual([
      ['one', 'same', 'failed'],
      ['two', 'same', 'failed'],
    ]);
    expect(rows.get('dupes/one/tool.py')!.reason).toBe(`the name "same" is also published by ${join(TWO, 'tool.py')}; give all but one another "name" in the catalog (--write keeps it)`);
    expect(rows.get('dupes/two/tool.py')!.reason).toBe(`the name "same" is also published by ${join(ONE, 'tool.py')}; give all but one another "name" in the catalog (--write keeps it)`);
  });

  it('--write keeps neither: the catalog never holds a name twice', async () => {
    const file = join(dir, 'catalog.json');
    // A third tool, usable, so that a catalog is written.
    const result = await scan([ONE, TWO, COUNT, '--write', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`wrote 1 tool to ${file}`);
    const written = (JSON.parse(readFileSync(file, 'utf8')) as { tools: { source: string }[] }).tools.map((tool) => tool.source);
    expect(written).toEqual([join(COUNT, 'tool.mjs')]);
  });

  it('once renamed by --prefix, both are served, each under its own name', async () => {
    const { code, rows } = await scanJson([ONE, TWO, '--prefix', `${TWO}=two_`]);
    expect(code).toBe(0);
    expect([...rows.values()].map((row) => [row.category, row.name, row.status])).toEqual([
      ['one', 'same', 'ok'],
      ['two', 'two_same', 'ok'],
    ]);
  });
});
