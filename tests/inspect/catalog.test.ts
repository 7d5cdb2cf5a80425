/**
 * `twylt inspect` serving a catalog of 101 tools (one fixture tool under 100 names in five
 * categories, and the probe example, whose form is taller than the window), in Chromium: the
 * list is grouped by category, the filter box narrows it, and the list and the result start
 * at the top of the page however far down the form is scrolled. With TWYLT_SCREENSHOTS=1 it
 * also writes docs/images/inspect-catalog.png.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/twylt-cli.js';
import { NO_CHROMIUM_REASON, noChromium, openInspectPage, until, type InspectPage } from './support.js';

const MEASURE = [process.execPath, join(repoRoot, 'tests/fixtures/mcp/measure.mjs')];
const PROBE = [process.execPath, join(repoRoot, 'build/examples/probe/tool.js')];
const CATEGORIES = ['science/units', 'science/time', 'text', 'files/read', 'files/write'];
const CATALOG = Array.from({ length: 100 }, (_, i) => ({ name: `measure_${String(i).padStart(3, '0')}`, category: CATEGORIES[i % CATEGORIES.length]! }));
const SCREENSHOTS = process.env.TWYLT_SCREENSHOTS === '1' ? join(repoRoot, 'docs/images') : undefined;

let dir: string;
let page: Page;
let opened: InspectPage;

const nav = () => page.getByRole('navigation', { name: 'Tools' });
const listed = async () => (await nav().locator('.tool-name').allTextContents()).sort();

/** Where an element's top is on the page (not in the window), in CSS pixels. */
async function pageTop(selector: string): Promise<number> {
  return page.evaluate(`document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect().top + window.scrollY`);
}

describe.skipIf(noChromium)(`a catalog of 101 tools in Chromium${noChromium ? ` (${NO_CHROMIUM_REASON})` : ''}`, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'twylt-inspect-catalog-'));
    const config = join(dir, 'catalog.json');
    const tools = [{ command: PROBE, category: 'examples' }, ...CATALOG.map((entry) => ({ command: MEASURE, ...entry }))];
    writeFileSync(config, JSON.stringify({ tools }));
    opened = await openInspectPage(['--config', config], { width: 1400, height: 900 });
    ({ page } = opened);
    await page.getByRole('heading', { level: 1, name: 'probe' }).waitFor();
  }, 120_000);

  afterEach(() => expect(opened.errors).toEqual([]));

  afterAll(async () => {
    await opened?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('groups the tools by category, categories in name order, each with its count', async () => {
    const headings = await nav().getByRole('heading', { level: 3 }).allTextContents();
    expect(headings).toEqual(['examples 1', 'files/read 20', 'files/write 20', 'science/time 20', 'science/units 20', 'text 20']);
    const units = nav().getByRole('region', { name: 'Category science/units' });
    expect(await units.locator('.tool-name').allTextContents()).toEqual(CATALOG.filter((entry) => entry.category === 'science/units').map((entry) => entry.name));
    expect(await listed()).toHaveLength(101);
    expect(await nav().getByRole('status').textContent()).toBe('101 tools in 6 categories');
  });

  it('narrows the list with the filter box: every word must match a name, description or category', async () => {
    const filter = nav().getByLabel('Filter tools');
    await filter.fill('units 01');
    const expected = CATALOG.filter((entry) => entry.category.includes('units') && entry.name.includes('01')).map((entry) => entry.name);
    expect(expected.length).toBeGreaterThan(0);
    await until(async () => expect(await listed()).toEqual(expected));
    expect(await nav().getByRole('heading', { level: 3 }).allTextContents()).toEqual([`science/units ${expected.length}`]);
    expect(await nav().getByRole('status').textContent()).toBe(`${expected.length} of 101 tools`);

    await nav().getByRole('button', { name: new RegExp(`^${expected[0]}\\b`) }).click();
    await page.getByRole('heading', { level: 1, name: expected[0] }).waitFor();

    await filter.fill('VALIDATED input');
    await until(async () => expect(await listed()).toEqual(['probe']));
    await filter.fill('no such tool');
    await until(async () => expect(await nav().getByText('No tool matches "no such tool".').count()).toBe(1));
    expect(await listed()).toEqual([]);
    await filter.fill('');
    await until(async () => expect(await listed()).toHaveLength(101));
  });

  it('keeps the list and the result at the top of the page beside a form taller than the window', async () => {
    await nav().getByRole('button', { name: /^probe\b/ }).click();
    await page.getByRole('heading', { level: 1, name: 'probe' }).waitFor();
    const height = await page.evaluate<number>('document.documentElement.scrollHeight');
    expect(height).toBeGreaterThan(900 * 1.3); // the form is taller than the window
    // 101 tools do not stretch the page: the list scrolls in its own column.
    expect(height).toBeLessThan(4000);
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
    expect(await page.evaluate<number>('window.scrollY')).toBeGreaterThan(300);
    const formTop = await pageTop('section.input');
    expect(await pageTop('nav.tools .tools-inner')).toBeLessThan(120);
    expect(Math.abs((await pageTop('section.result')) - formTop)).toBeLessThan(5);
    if (SCREENSHOTS) {
      mkdirSync(SCREENSHOTS, { recursive: true });
      await nav().getByLabel('Filter tools').fill('science');
      await page.evaluate('window.scrollTo(0, 0)');
      await page.screenshot({ path: join(SCREENSHOTS, 'inspect-catalog.png'), animations: 'disabled' });
      await nav().getByLabel('Filter tools').fill('');
    }
  });
});
