/**
 * The soak (bench/soak.mjs) in short: `twylt-mcp --http` with warm processes under mixed
 * traffic for about 40 seconds, then SIGTERM. The script itself checks its bounds (no call
 * lost or run twice, memory, descriptors and processes back where they started, no zombie,
 * nothing left after the end) and exits 1 when one breaks; here its report is read too.
 */
import { describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/process.js';

describe('soak, short', () => {
  it('serves every kind of call, loses and repeats none, and ends where it started', async () => {
    const result = await run([process.execPath, `${ROOT}bench/soak.mjs`, '--minutes', '0.66', '--clients', '3', '--json'], { timeoutMs: 240_000 });
    const lines = result.stdout.trim().split('\n');
    const report = JSON.parse(lines[lines.length - 1]!);
    expect(report.problems, result.stderr).toEqual([]);
    expect(result.code).toBe(0);
    for (const outcome of ['ok', 'invalid_input', 'tool_failed', 'tool_crashed', 'timed_out', 'output_too_large', 'disconnected', 'cancelled']) {
      expect(report.outcomes[outcome], outcome).toBeGreaterThan(0);
    }
    expect([report.lost, report.duplicated, report.processesLeft, report.end.zombies]).toEqual([0, 0, 0, 0]);
    expect(report.exit).toEqual({ code: 143, signal: null });
  }, 300_000);
});
