/**
 * The drain of `twylt-mcp --http` ends when its last exchange does (issue 35: told by the
 * exchange's end, no polling), not when the grace runs out: the Drainer itself, and a bridge
 * whose one call ends 60 s before its grace would.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Drainer } from '../../packages/twylt-mcp/src/http/drain.js';
import { SLEEPER, sleeperPid, waitFor } from '../support/mcp.js';
import { startHttpBridge } from '../support/mcp-http.js';

const dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-drainer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const exchange = () => ({ closed: 0, close() { this.closed += 1; }, cancel() {} });

describe('Drainer', () => {
  it('is idle at once with no exchange, and once the last of several ends', async () => {
    const drainer = new Drainer();
    await drainer.idle();
    const [a, b] = [exchange(), exchange()];
    drainer.add(a);
    drainer.add(b);
    let idle = false;
    const waiting = drainer.idle().then(() => (idle = true));
    drainer.delete(a);
    await Promise.resolve();
    expect(idle).toBe(false);
    drainer.delete(b);
    await waiting;
    expect(idle).toBe(true);
  });

  it('draining is set once, and closeAll aborts every exchange in progress', () => {
    const drainer = new Drainer();
    expect(drainer.draining).toBe(false);
    drainer.start();
    expect(drainer.draining).toBe(true);
    const [a, b] = [exchange(), exchange()];
    drainer.add(a);
    drainer.add(b);
    drainer.closeAll();
    expect([a.closed, b.closed]).toEqual([1, 1]);
  });
});

describe('twylt-mcp --http on SIGTERM', () => {
  it('stops as soon as its last call is answered, long before its grace is over', async () => {
    const release = join(dir, 'release');
    const pidFile = join(dir, 'long.pid');
    const bridge = await startHttpBridge(['--grace-ms', '60000', '--', ...SLEEPER]);
    const client = await bridge.connect();
    const long = client.callTool({ name: 'sleeper', arguments: { action: 'wait', pid_file: pidFile, release_file: release, note: 'long' } });
    await sleeperPid(pidFile);
    bridge.child.kill('SIGTERM');
    await waitFor(() => bridge.events().some((event) => event.event === 'draining'), 'the bridge to start draining');
    const released = Date.now();
    writeFileSync(release, '');
    expect((await long).structuredContent).toMatchObject({ note: 'long' });
    expect(await bridge.exited).toEqual({ code: 143, signal: null });
    expect(Date.now() - released).toBeLessThan(15_000);
    expect(bridge.events().map((event) => event.event)).not.toContain('grace_over');
  }, 90_000);
});
