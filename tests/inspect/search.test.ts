/**
 * The inspect page's search box, in Chromium: a request in plain words gives the tools that
 * fit it, best first, ranked by the server as `twylt search` and twylt-mcp's search mode rank
 * them; a match selects its tool. And GET /api/search itself: the token, and its limit.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { searchCatalog } from '../support/search-catalog.js';
import { runTwylt } from '../support/twylt-cli.js';
import { NO_CHROMIUM_REASON, noChromium, openInspectPage, send, until, type InspectPage } from './support.js';

let dir: string;
let config: string;
let page: Page;
let opened: InspectPage;

const matches = () => page.getByRole('list', { name: 'Best matches' }).locator('.tool-name').allTextContents();

describe.skipIf(noChromium)(`the search box in Chromium${noChromium ? ` (${NO_CHROMIUM_REASON})` : ''}`, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'twylt-inspect-search-'));
    config = join(dir, 'catalog.json');
    writeFileSync(config, JSON.stringify(searchCatalog()));
    opened = await openInspectPage(['--config', config], { width: 1400, height: 900 });
    ({ page } = opened);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
  }, 120_000);

  afterEach(() => expect(opened.errors).toEqual([]));

  afterAll(async () => {
    await opened?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ranks the tools for a request as twylt search does, and a match selects its tool', async () => {
    const box = page.getByLabel('Search tools by what they do');
    await box.fill('open a PR to merge my branch');
    await until(async () => expect((await matches())[0]).toBe('create_pull_request'));
    const cli = await runTwylt(['search', 'open a PR to merge my branch', '--config', config, '--json', '--limit', '10']);
    expect(await matches()).toEqual(JSON.parse(cli.stdout).tools.map((tool: { name: string }) => tool.name));
    expect(await page.getByRole('region', { name: 'Search tools' }).getByRole('status').textContent()).toBe(`${(await matches()).length} best matches`);
    await page.getByRole('list', { name: 'Best matches' }).getByRole('button').first().click();
    await page.getByRole('heading', { level: 1, name: 'create_pull_request' }).waitFor();
  });

  it('says when nothing fits, and clears with the box', async () => {
    const box = page.getByLabel('Search tools by what they do');
    await box.fill('zzzqqq');
    await until(async () => expect(await page.getByRole('region', { name: 'Search tools' }).getByRole('status').textContent()).toBe('No tool fits "zzzqqq".'));
    await box.fill('');
    await until(async () => expect(await page.getByRole('list', { name: 'Best matches' }).count()).toBe(0));
  });

  it('GET /api/search needs the token and a limit from 1 to 20', async () => {
    const { inspect } = opened;
    const port = Number(new URL(inspect.url).port);
    const token = new URL(inspect.url).hash.replace('#token=', '');
    const headers = { authorization: `Bearer ${token}`, host: `127.0.0.1:${port}` };
    const ok = await send(port, { path: '/api/search?q=weather%20tomorrow&limit=1', headers });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body.toString())).toMatchObject({ tools: [{ name: 'get_forecast' }] });
    const bad = await send(port, { path: '/api/search?q=x&limit=99', headers });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body.toString()).error).toBe('limit must be a whole number from 1 to 20, got "99"');
    expect((await send(port, { path: '/api/search?q=x', headers: { host: headers.host } })).status).toBe(401);
  });
});
