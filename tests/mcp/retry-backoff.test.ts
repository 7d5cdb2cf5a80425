/**
 * twylt-mcp's back-off for a tool left out at start (issue 30, item 12): each failed retry
 * doubles the wait. Observed on a real bridge and a real tool that never describes itself,
 * with `--describe-retry-ms 100`: the waits the bridge announces, and the quiet time between
 * one describe's end and the next one's start, which a timer never shortens (a loaded
 * machine only lengthens it, so the verdict holds however busy the machine is).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/process.js';
import { JS_RUNTIME } from '../support/runtimes.js';
import { SLEEPER, startBridge, waitFor } from '../support/mcp.js';

const UNREADY = [...JS_RUNTIME, `${ROOT}tests/fixtures/mcp/unready.mjs`];
const dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-backoff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each describe's [start, end], in wall-clock ms. */
function describes(log: string): [number, number][] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => line.split(' ').map(Number) as [number, number]);
}

describe('the back-off of a left-out tool', () => {
  it('doubles after each failed retry: 100, 200, 400, 800, 1600 ms', async () => {
    const log = join(dir, 'describes.log');
    const bridge = await startBridge(['--describe-retry-ms', '100', '--', ...SLEEPER, '--', ...UNREADY], { UNREADY_LOG: log });
    try {
      // The describe at start, then five retries.
      await waitFor(() => describes(log).length >= 6, 'five retries', 60_000);
      await waitFor(() => (bridge.stderr().match(/still left out/g) ?? []).length >= 5, 'the fifth retry to be logged', 20_000);
    } finally {
      await bridge.close();
    }
    const announced = [...bridge.stderr().matchAll(/twylt-mcp: still left out, described again in ([^:]+): /g)].map((match) => match[1]);
    expect(announced.slice(0, 5)).toEqual(['200 ms', '400 ms', '800 ms', '2 s', '3 s']);
    const runs = describes(log);
    const waits = [100, 200, 400, 800, 1600];
    waits.forEach((wait, k) => {
      const quiet = runs[k + 1]![0] - runs[k]![1];
      expect(quiet, `between describe ${k} and ${k + 1}`).toBeGreaterThanOrEqual(wait);
    });
  });
});
