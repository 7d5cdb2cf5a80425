/**
 * `twylt inspect`'s page in a real browser (Debian's Chromium through playwright-core): one
 * inspector and one browser page for the whole file, driven by roles and labels as a person
 * with a screen reader would find them. With TWYLT_SCREENSHOTS=1 the tests also write the
 * screenshots of docs/inspect.md into docs/images/.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NO_PYTHON_REASON, noPython, pythonTool } from '../support/python.js';
import { repoRoot } from '../support/twylt-cli.js';
import { NO_CHROMIUM_REASON, launchChromium, noChromium, startInspect, until, type Inspect } from './support.js';

const probe = [process.execPath, join(repoRoot, 'build/examples/probe/tool.js')];
const shapes = [process.execPath, join(repoRoot, 'tests/inspect/fixtures/shapes.mjs')];
const SCREENSHOTS = process.env.TWYLT_SCREENSHOTS === '1' ? join(repoRoot, 'docs/images') : undefined;

let inspect: Inspect;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

const field = (path: string) => page.getByLabel(path, { exact: true });
const result = () => page.getByRole('region', { name: 'Result' });
const history = () => page.getByRole('region', { name: 'History' });

/**
 * Press Call and wait for the record it produced to be shown, in the result and in the history
 * (which the page reloads after the result); resolves with its number.
 */
async function call(): Promise<number> {
  const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/call')), page.getByRole('button', { name: 'Call', exact: true }).click()]);
  const { id } = (await response.json()) as { id: number };
  await until(async () => expect(await result().getByText(`#${id} ·`).count()).toBe(1));
  await until(async () => expect(await history().getByRole('button', { name: `Show call #${id}`, exact: true }).count()).toBe(1));
  return id;
}

async function selectTool(name: string) {
  await page.getByRole('navigation', { name: 'Tools' }).getByRole('button', { name: new RegExp(`^${name}\\b`) }).click();
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

async function rawOutput(): Promise<string> {
  await result().getByRole('tab', { name: 'Raw' }).click();
  const text = await result().getByRole('tabpanel', { name: 'Raw output' }).locator('pre').textContent();
  await result().getByRole('tab', { name: 'Pretty' }).click();
  return text ?? '';
}

async function screenshot(name: string, options: { top?: boolean } = {}) {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  if (options.top) await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot({ path: join(SCREENSHOTS, `inspect-${name}.png`), animations: 'disabled' });
}

describe.skipIf(noChromium)(`the page in Chromium${noChromium ? ` (${NO_CHROMIUM_REASON})` : ''}`, () => {
  beforeAll(async () => {
    const commands = [probe, shapes, ...(noPython ? [] : [pythonTool()])];
    inspect = await startInspect(commands.flatMap((command) => ['--', ...command]));
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 }, colorScheme: 'light', reducedMotion: 'reduce' });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(inspect.url);
  });

  // The page's own scripts must never fail.
  afterEach(() => expect(pageErrors).toEqual([]));

  afterAll(async () => {
    await browser?.close();
    await inspect?.stop();
  });

  it('lists every tool with its name, version, description, format and requirements; the token leaves the address bar', async () => {
    const tools = page.getByRole('navigation', { name: 'Tools' });
    await tools.getByRole('button').first().waitFor();
    const entries = await tools.getByRole('listitem').allTextContents();
    expect(entries[0]).toContain('probe');
    expect(entries[0]).toContain('1.2.0');
    expect(entries[0]).toContain('Return the validated input, defaults applied.');
    expect(entries[0]).toContain('TWYLT 1.8 · npm package.json');
    expect(entries[1]).toContain('shapes');
    if (!noPython) expect(entries[2]).toMatch(/py_echo.*1\.2\.0.*Repeat a text.*TWYLT 1\.8 · pip requirements\.txt/s);
    expect(page.url()).toBe(`${inspect.origin}/`);
    // No cookie at all: the token stays in this tab, sent as a header to this server only.
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(await page.context().cookies()).toEqual([]);
  });

  it('fills a form with nested objects and arrays, calls, and shows the output pretty and raw (the tool\'s exact text)', async () => {
    await selectTool('probe');
    // Defaults and required constants are pre-filled.
    expect(await field('mode').inputValue()).not.toBe('');
    expect(await page.getByLabel('mode', { exact: true }).locator('option:checked').textContent()).toBe('safe');
    expect(await field('kind').locator('option:checked').textContent()).toBe('probe');
    await field('name').fill('Ada');
    await field('count').fill('3');
    await field('point.x').fill('1.5');
    await field('point.y').fill('-2');
    await field('mode').selectOption({ label: 'fast' });
    await field('verbose').check();
    await page.getByRole('button', { name: 'Add item to tags' }).click();
    await page.getByRole('button', { name: 'Add item to tags' }).click();
    await field('tags[0].label').fill('alpha');
    await field('tags[0].weight').fill('4');
    await field('tags[1].label').fill('beta');
    expect(await field('tags[1].weight').inputValue()).toBe('1'); // the item's default
    await page.getByRole('button', { name: 'Add item to units' }).click();
    await field('units[0]').selectOption({ label: 'cm' });
    await field('note').fill('hello');
    const id = await call();

    await result().getByText('Success').waitFor();
    expect(await result().textContent()).toMatch(/exit code\s*0/);
    const pretty = await result().getByRole('tabpanel', { name: 'Pretty output' }).textContent();
    const output = JSON.parse(pretty!);
    expect(output).toEqual({
      name: 'Ada',
      count: 3,
      mode: 'fast',
      kind: 'probe',
      verbose: true,
      point: { x: 1.5, y: -2 },
      tags: [
        { label: 'alpha', weight: 4 },
        { label: 'beta', weight: 1 },
      ],
      note: 'hello',
      units: ['cm'],
    });
    // The raw view is what the tool printed, byte for byte: the same input given to it directly.
    const direct = spawnSync(probe[0]!, [probe[1]!, JSON.stringify(output)], { encoding: 'utf8' });
    expect(await rawOutput()).toBe(direct.stdout);
    expect(id).toBeGreaterThan(0);
    await screenshot('form', { top: true });
  });

  it('shows the browser\'s complaint as the user types, and after the call each issue next to its field and in the Errors list', async () => {
    await field('point.x').fill('5000');
    const complaint = page.locator('[data-path="point.x"] .invalid');
    await until(async () => expect(await complaint.textContent()).toMatch(/less than or equal to 1000/));
    await field('count').fill('');
    await field('tags[0].label').fill('Bad Label');
    await call();

    const errors = result().getByRole('list', { name: 'Errors' });
    const listed = await errors.getByRole('listitem').allTextContents();
    expect(listed.map((text) => text.split(' ')[0])).toEqual(['count', 'point.x', 'tags[0].label']);
    expect(await result().textContent()).toMatch(/exit code\s*2.*stage\s*input/s);
    // Each issue under its own field, linked to it for screen readers.
    for (const [path, message] of [
      ['count', 'Required field is missing'],
      ['point.x', 'less than or equal to 1000'],
      ['tags[0].label', 'Must match the pattern'],
    ] as const) {
      expect(await page.locator(`[data-path="${path}"] .issues`).textContent(), path).toContain(message);
      expect(await field(path).getAttribute('aria-invalid'), path).toBe('true');
      const described = (await field(path).getAttribute('aria-describedby')) ?? '';
      expect(described, path).toContain(`field:${path}:issues`);
    }
    // The stderr and the error object are shown too.
    expect(await result().getByLabel('stderr').textContent()).toContain('"validation_error"');
    await field('point.x').scrollIntoViewIfNeeded();
    await screenshot('errors');
  });

  it('switches to the JSON view and back without losing input, and edits in either view show in the other', async () => {
    await field('count').fill('7');
    await field('point.x').fill('12.25');
    await page.getByRole('tab', { name: 'JSON' }).click();
    const editor = page.getByLabel('Input JSON');
    const shown = JSON.parse(await editor.inputValue());
    expect(shown).toMatchObject({ name: 'Ada', count: 7, point: { x: 12.25, y: -2 }, tags: [{ label: 'Bad Label', weight: 4 }, { label: 'beta', weight: 1 }], units: ['cm'], note: 'hello' });
    await screenshot('json');

    await editor.fill(JSON.stringify({ ...shown, name: 'Grace', tags: [...shown.tags, { label: 'gamma', weight: 9 }] }, null, 2));
    // Half-typed JSON keeps the user in the JSON view instead of losing it.
    await editor.press('End');
    await editor.pressSequentially(' ,');
    await page.getByRole('tab', { name: 'Form' }).click();
    await page.getByRole('alert').getByText(/holds no input object yet/).waitFor();
    expect(await editor.isVisible()).toBe(true);
    await editor.press('Backspace');
    await editor.press('Backspace');
    await page.getByRole('button', { name: 'Dismiss' }).click();
    await page.getByRole('tab', { name: 'Form' }).click();

    expect(await field('name').inputValue()).toBe('Grace');
    expect(await field('count').inputValue()).toBe('7');
    expect(await field('point.x').inputValue()).toBe('12.25');
    expect(await field('tags[2].label').inputValue()).toBe('gamma');
    expect(await field('tags[2].weight').inputValue()).toBe('9');
    expect(await field('units[0]').locator('option:checked').textContent()).toBe('cm');
    await page.getByRole('tab', { name: 'JSON' }).click();
    expect(JSON.parse(await editor.inputValue())).toMatchObject({ name: 'Grace', count: 7, point: { x: 12.25 } });
    await page.getByRole('tab', { name: 'Form' }).click();
    await field('tags[0].label').fill('alpha');
    const id = await call();
    expect(await result().getByText('Success').count()).toBe(1);
    expect(id).toBeGreaterThan(1);
  });

  it('re-runs a call from the history: same tool, input and transport, a new entry', async () => {
    const entries = history().getByRole('listitem');
    const before = await entries.count();
    expect(before).toBeGreaterThanOrEqual(3);
    // Change the form first: a re-run uses the call's own input, and puts it back in the form.
    await field('name').fill('Changed');
    const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/call')), history().getByRole('button', { name: 'Re-run call #1' }).click()]);
    const record = (await response.json()) as { id: number; input: string; ok: boolean };
    await until(async () => expect(await entries.count()).toBe(before + 1));
    const first = await (await page.request.get(`${inspect.origin}/api/history`, { headers: { authorization: `Bearer ${inspect.token}` } })).json();
    expect(record.input).toBe(first.calls[0].input);
    expect(record.ok).toBe(true);
    expect(await field('name').inputValue()).toBe('Ada');
    await until(async () => expect(await result().getByText(`#${record.id} ·`).count()).toBe(1));
    await screenshot('history');
  });

  it('calls over each transport: argument, stdin and file', async () => {
    await selectTool('shapes');
    await field('title').fill('over the wire');
    for (const [label, transport] of [['stdin', 'stdin'], ['file (input.json)', 'file'], ['argument (cli)', 'cli']]) {
      await page.getByRole('radio', { name: label }).check();
      await call();
      expect(await result().locator('.facts').textContent()).toContain(`transport${transport}`);
      expect(JSON.parse(await rawOutput())).toEqual({ received: { title: 'over the wire' } });
    }
  });

  it('edits maps, free-form objects, any values, unions, nullable values and arrays of objects with $refs', async () => {
    await field('labels').fill('{"a": 2, "b": 3}');
    await field('extra').fill('{"deep": [1, {"x": true}]}');
    await field('anything').fill('"text"');
    await field('target').fill('7');
    await page.getByLabel('limit is null').check();
    expect(await field('limit').isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Add item to steps' }).click();
    await field('steps[0].op').selectOption({ label: 'remove' });
    await page.getByRole('button', { name: 'Add steps[0].at' }).click();
    await field('steps[0].at.x').fill('4');
    await field('steps[0].at.y').fill('5');
    await call();
    expect(JSON.parse(await rawOutput())).toEqual({
      received: { title: 'over the wire', labels: { a: 2, b: 3 }, extra: { deep: [1, { x: true }] }, anything: 'text', target: 7, limit: null, steps: [{ op: 'remove', at: { x: 4, y: 5 } }] },
    });

    // Half-typed JSON is flagged and not sent; a wrong value inside a map is an issue under the map.
    await field('labels').fill('{"a": ');
    await until(async () => expect(await page.locator('[data-path="labels"] .invalid').textContent()).toMatch(/Not JSON yet/));
    await field('labels').fill('{"a": "many"}');
    await call();
    expect(await page.locator('[data-path="labels"] .issues').textContent()).toContain('Expected an integer');
    await page.getByLabel('limit is null').uncheck();
    await field('limit').fill('0');
    await field('labels').fill('{"a": 1}');
    await call();
    expect(await page.locator('[data-path="limit"] .issues').textContent()).toMatch(/1/);
  });

  it('loads few-shot examples with one click', async () => {
    await page.getByRole('button', { name: 'Use example 1' }).click();
    expect(await field('title').inputValue()).toBe('demo');
    expect(JSON.parse(await field('labels').inputValue())).toEqual({ a: 1 });
    expect(await page.getByLabel('limit is null').isChecked()).toBe(true);
    expect(await field('target').inputValue()).toBe('');
  });

  it('runs each describe mode with one click', async () => {
    await selectTool('probe');
    await page.getByRole('group', { name: 'Describe' }).getByRole('button', { name: 'json_spec' }).click();
    const spec = page.getByRole('region', { name: 'Describe json_spec' });
    await spec.getByText('"format_version"').waitFor();
    expect(JSON.parse((await spec.locator('pre').textContent())!)).toMatchObject({ format_version: '1.8', name: 'probe' });
    await page.getByRole('group', { name: 'Describe' }).getByRole('button', { name: 'brief' }).click();
    const brief = page.getByRole('region', { name: 'Describe brief' });
    await until(async () => expect(await brief.locator('pre').textContent()).toContain('Return the validated input'));
    await page.getByRole('group', { name: 'Describe' }).getByRole('button', { name: 'few_shots' }).click();
    await page.getByRole('region', { name: 'Describe few_shots' }).getByText('"Ada"').first().waitFor();
    await page.getByRole('button', { name: 'Close' }).click();
  });

  it.skipIf(noPython)(`sends an integer typed beyond 2^53 to the tool digit for digit (${noPython ? NO_PYTHON_REASON : 'python3'})`, async () => {
    await selectTool('py_echo');
    await page.getByRole('button', { name: 'Use example 2' }).click();
    expect(await field('decor.prefix').inputValue()).toBe('<');
    await field('scale').fill('12345678901234567890');
    await call();
    const raw = await rawOutput();
    expect(raw).toContain('"scale": 12345678901234567890');
    expect(raw).toContain('"echo": "<ABAB>"');
    expect(await result().getByRole('tabpanel', { name: 'Pretty output' }).textContent()).toContain('12345678901234567890');
  });
});
