/** Opening the page: which program, as an argument list; and what happens when it cannot be. */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { browserCommand } from '../../packages/twylt/src/inspect/browser.js';
import { repoRoot } from '../support/twylt-cli.js';
import { fixturesDir, startInspect } from './support.js';

const URL = 'http://127.0.0.1:8765/?token=abc';
const sleeper = join(repoRoot, 'tests/fixtures/mcp/sleeper.mjs');
const dir = mkdtempSync(join(tmpdir(), 'twylt-inspect-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('browserCommand', () => {
  it('uses the system opener, as an argument list', () => {
    expect(browserCommand(URL, 'darwin', {})).toEqual({ argv: ['open', URL] });
    expect(browserCommand(URL, 'win32', {})).toEqual({ argv: ['cmd', '/c', 'start', '', URL] });
    expect(browserCommand(URL, 'linux', { DISPLAY: ':0' })).toEqual({ argv: ['xdg-open', URL] });
    expect(browserCommand(URL, 'linux', { WAYLAND_DISPLAY: 'wayland-0' })).toEqual({ argv: ['xdg-open', URL] });
  });

  it('prefers $BROWSER (its first entry), and says why there is nothing to open on a Linux without a display', () => {
    expect(browserCommand(URL, 'linux', { BROWSER: '/opt/firefox/firefox:chromium' })).toEqual({ argv: ['/opt/firefox/firefox', URL] });
    expect(browserCommand(URL, 'linux', {})).toEqual({ reason: expect.stringMatching(/no graphical display/) });
  });
});

describe('twylt inspect without --no-open', () => {
  it('opens the link, token included, in the browser', async () => {
    const log = join(dir, 'opened.json');
    const inspect = await startInspect(['--', 'node', sleeper], { BROWSER: join(fixturesDir, 'fake-browser.mjs'), FAKE_BROWSER_LOG: log }, { open: true });
    try {
      const deadline = Date.now() + 15_000;
      while (!existsSync(log) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(JSON.parse(readFileSync(log, 'utf8'))).toEqual([inspect.url]);
    } finally {
      await inspect.stop();
    }
  });

  it('keeps serving, with a note, when no browser can be started', async () => {
    const inspect = await startInspect(['--', 'node', sleeper], { BROWSER: join(dir, 'no-such-browser') }, { open: true });
    try {
      const deadline = Date.now() + 15_000;
      while (!/could not open a browser/.test(inspect.stderr()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(inspect.stderr()).toMatch(/twylt inspect: could not open a browser with .*no-such-browser .*open the link above yourself/);
      expect(inspect.child.exitCode).toBe(null);
    } finally {
      expect((await inspect.stop()).code).toBe(0);
    }
  });
});
