/**
 * A new user's findings on `twylt inspect`'s page (issue 30, item 14), in Chromium: the tools
 * left out (by the scan, or because they could not be described) are said on the page, not
 * only on the terminal; an enum left unset shows the default the tool will use; and one fault
 * of a field is told once under it, not by the browser and the tool both.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PACKS } from '../catalog/support.js';
import { repoRoot } from '../support/twylt-cli.js';
import { NO_CHROMIUM_REASON, noChromium, openInspectPage, send, until, type Inspect, type InspectPage } from './support.js';

const PROBE = [process.execPath, join(repoRoot, 'build/examples/probe/tool.js')];
const UNREADY = [process.execPath, join(repoRoot, 'tests/fixtures/mcp/unready.mjs')];

let dir: string;
let inspect: Inspect;
let page: Page;
let opened: InspectPage;

const nav = () => page.getByRole('navigation', { name: 'Tools' });
const field = (path: string) => page.getByLabel(path, { exact: true });

describe.skipIf(noChromium)(`the page in Chromium${noChromium ? ` (${NO_CHROMIUM_REASON})` : ''}`, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'twylt-inspect-fixes-'));
    // A folder whose one tool cannot describe itself: the scan leaves it out.
    mkdirSync(join(dir, 'extra/broken'), { recursive: true });
    writeFileSync(join(dir, 'extra/broken/tool.mjs'), "process.stderr.write('cannot start\\n');\nprocess.exit(1);\n");
    // The loose pack serves two tools; the unready one is left out when described.
    opened = await openInspectPage(['--scan', join(PACKS, 'loose'), '--scan', join(dir, 'extra'), '--', ...PROBE, '--', ...UNREADY], { width: 1440, height: 1000 });
    ({ inspect, page } = opened);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
  }, 120_000);

  afterEach(() => expect(opened.errors).toEqual([]));

  afterAll(async () => {
    await opened?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('says how many tools were left out and why, beside the tools it serves', async () => {
    expect((await nav().locator('.tool-name').allTextContents()).sort()).toEqual(['count_chars', 'probe', 'shout']);
    expect(await page.locator('.topbar .sub').textContent()).toBe('3 tools · 2 left out · calls run on this machine');
    const leftOut = nav().getByRole('region', { name: 'Left out' });
    await leftOut.getByText('2 tools left out').click();
    const lines = await leftOut.getByRole('listitem').allTextContents();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${join(dir, 'extra/broken/tool.mjs')} \\(failed\\): cannot describe it: `));
    expect(lines[1]).toMatch(/^cannot describe tool \(.*unready\.mjs\): .*never ready.* \(described again at the next reload\)$/);
    // The same in the API, and after a reload, which describes the unready tool again.
    const api = await send(inspect.port, { path: '/api/tools', headers: { authorization: `Bearer ${inspect.token}` } });
    expect((JSON.parse(api.body) as { leftOut: string[] }).leftOut).toEqual(lines);
    const [reloaded] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/reload')), nav().getByRole('button', { name: 'Reload' }).click()]);
    expect(reloaded.status()).toBe(200);
    expect(((await reloaded.json()) as { leftOut: string[] }).leftOut).toEqual(lines);
    await until(async () => expect(await leftOut.getByRole('listitem').allTextContents()).toEqual(lines));
  });

  it('an enum with a default, left unset (as the example leaves it), shows the default the tool will use', async () => {
    await nav().getByRole('button', { name: /^probe\b/ }).click();
    await page.getByRole('heading', { level: 1, name: 'probe' }).waitFor();
    expect(await field('mode').locator('option:checked').textContent()).toBe('safe');
    await page.getByRole('button', { name: 'Use example 1' }).click();
    await until(async () => expect(await field('name').inputValue()).toBe('Ada'));
    expect(await field('mode').inputValue()).toBe('');
    expect(await field('mode').locator('option:checked').textContent()).toBe('(default: safe)');
  });

  it('a field\'s fault is told once: the browser\'s complaint as the user types, the tool\'s issue once the call comes back', async () => {
    await field('point.x').fill('5000');
    const under = page.locator('[data-path="point.x"]');
    await until(async () => expect(await under.locator('.invalid').textContent()).toMatch(/less than or equal to 1000/));
    const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/call')), page.getByRole('button', { name: 'Call', exact: true }).click()]);
    expect((await response.json()).exitCode).toBe(2);
    await until(async () => expect(await under.locator('.issues li').count()).toBe(1));
    expect(await under.locator('.issues li').textContent()).toMatch(/less than or equal to 1000/);
    expect(await under.locator('.invalid').count()).toBe(0);
    // Still marked invalid, and described by the tool's issue only.
    expect(await field('point.x').getAttribute('aria-invalid')).toBe('true');
    expect(await field('point.x').getAttribute('aria-describedby')).toBe('field:point.x:help field:point.x:issues');
  });
});
