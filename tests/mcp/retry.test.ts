/**
 * A tool left out at start (its describe fails, or runs past the describe time-out) is
 * described again in the background and joins the served set once it can describe itself:
 * over stdio the client is told with notifications/tools/list_changed, over HTTP the next
 * request sees it. Shutdown leaves no describe running. `--describe-retry-ms` shortens the
 * back-off; the tests wait for the bridge's events, never for a fixed time.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/process.js';
import { BRIDGE_CLI, SLEEPER, isRunning, startBridge, startRawBridge, textOf, waitFor } from '../support/mcp.js';
import { startHttpBridge } from '../support/mcp-http.js';

const LATE = [process.execPath, `${ROOT}tests/fixtures/mcp/late.mjs`];
const dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-retry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let count = 0;
/** A fresh marker path (not created) and describe log for one test. */
function paths() {
  count += 1;
  return { marker: join(dir, `ready-${count}`), log: join(dir, `describes-${count}.log`) };
}

/** The pids of the late tool's describes so far. */
function describePids(log: string): number[] {
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map(Number) : [];
}

async function toolNames(client: { listTools(): Promise<{ tools: { name: string }[] }> }): Promise<string[]> {
  return (await client.listTools()).tools.map((tool) => tool.name).sort();
}

describe('a tool left out at start, over stdio', () => {
  it('is described again until it can be, then joins tools/list with a list_changed notification, and answers calls', async () => {
    const { marker, log } = paths();
    const bridge = await startBridge(['--describe-retry-ms', '100', '--', ...SLEEPER, '--', ...LATE, marker], { LATE_LOG: log });
    try {
      let changed!: () => void;
      const listChanged = new Promise<void>((resolve) => (changed = resolve));
      bridge.client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
      expect(bridge.client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
      expect(await toolNames(bridge.client)).toEqual(['sleeper']);
      expect(bridge.stderr()).toMatch(/twylt-mcp: left out, described again in the background: cannot describe tool \(.*late\.mjs .*\): .*waiting for/);
      // Retries run, and each outcome is one line of the bridge's log.
      await waitFor(() => /twylt-mcp: still left out, described again in \d+ ms: cannot describe tool/.test(bridge.stderr()), 'a failed retry', 20_000);
      expect(await toolNames(bridge.client)).toEqual(['sleeper']);

      writeFileSync(marker, '');
      await listChanged;
      // stderr and stdout are separate pipes: the log line may arrive after the notification.
      await waitFor(() => /twylt-mcp: described again, now serving "late" \(.*late\.mjs .*\)\n/.test(bridge.stderr()), 'the join to be logged', 20_000);
      expect(await toolNames(bridge.client)).toEqual(['late', 'sleeper']);
      const result = await bridge.client.callTool({ name: 'late', arguments: { text: 'here now' } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ text: 'here now' });
    } finally {
      await bridge.close();
    }
    await waitFor(() => !isRunning(bridge.pid), 'the bridge to end', 20_000);
    expect(describePids(log).filter(isRunning)).toEqual([]);
  });

  it('stops retrying when its client goes away, killing a describe that hangs, and ends by itself', async () => {
    const { marker, log } = paths();
    // The retry's describe hangs, far longer than the test waits for the bridge to end.
    const args = ['--describe-timeout', '120000', '--describe-retry-ms', '50', '--', ...SLEEPER, '--', ...LATE, marker, 'hang'];
    const bridge = await startRawBridge(args, { LATE_LOG: log });
    try {
      await waitFor(() => describePids(log).length === 2, 'a retry describe to run', 20_000);
      const pids = describePids(log);
      expect(isRunning(pids[1]!)).toBe(true);
      // The client goes away: stdin ends, no signal. The bridge must stop the describe to end.
      bridge.child.stdin.end();
      expect(await Promise.race([bridge.exited, new Promise((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000))])).toBe(0);
      await waitFor(() => pids.every((pid) => !isRunning(pid)), 'every describe to end', 20_000);
      expect(describePids(log)).toEqual(pids);
    } finally {
      bridge.child.kill('SIGKILL');
    }
  });

  it('stays out, logged, when its name is taken by then', async () => {
    const { marker } = paths();
    const bridge = await startBridge(['--describe-retry-ms', '100', '--', ...SLEEPER, '--', ...LATE, marker, 'fail', 'sleeper']);
    try {
      writeFileSync(marker, '');
      await waitFor(() => bridge.stderr().includes('stays out'), 'the collision to be logged', 20_000);
      expect(bridge.stderr()).toMatch(/twylt-mcp: stays out: "sleeper" \(.*late\.mjs .*\): its name "sleeper" is taken by .*sleeper\.mjs/);
      expect(await toolNames(bridge.client)).toEqual(['sleeper']);
      const result = await bridge.client.callTool({ name: 'sleeper', arguments: { action: 'wait' } });
      expect(result.isError).toBeFalsy();
    } finally {
      await bridge.close();
    }
  });

  it('in browse mode, joins twylt_list and twylt_call', async () => {
    const { marker } = paths();
    const bridge = await startBridge(['--catalog', 'browse', '--describe-retry-ms', '100', '--', ...SLEEPER, '--', ...LATE, marker]);
    try {
      const listed = async () => (JSON.parse(textOf(await bridge.client.callTool({ name: 'twylt_list', arguments: {} }))) as { tools: { name: string }[] }).tools.map((tool) => tool.name).sort();
      expect(await listed()).toEqual(['sleeper']);
      writeFileSync(marker, '');
      await waitFor(() => bridge.stderr().includes('now serving "late"'), 'the tool to join', 20_000);
      expect(await listed()).toEqual(['late', 'sleeper']);
      const result = await bridge.client.callTool({ name: 'twylt_call', arguments: { name: 'late', arguments: { text: 'browsed' } } });
      expect(result.isError).toBeFalsy();
      expect(JSON.parse(textOf(result))).toEqual({ text: 'browsed' });
    } finally {
      await bridge.close();
    }
  });

  it('with --strict, still refuses to start', async () => {
    const { marker } = paths();
    const result = await run([process.execPath, BRIDGE_CLI, '--strict', '--describe-retry-ms', '100', '--', ...SLEEPER, '--', ...LATE, marker]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^twylt-mcp: cannot start:\ntwylt-mcp: cannot describe tool \(.*late\.mjs .*\): .*waiting for/);
    expect(result.stderr).not.toContain('described again');
  });
});

describe('a tool left out at start, over --http', () => {
  it('joins the next tools/list once described, answers calls, and shutdown leaves no describe running', async () => {
    const { marker, log } = paths();
    const bridge = await startHttpBridge(['--describe-retry-ms', '100', '--', ...SLEEPER, '--', ...LATE, marker], { LATE_LOG: log });
    try {
      const client = await bridge.connect();
      expect(await toolNames(client)).toEqual(['sleeper']);
      await waitFor(() => bridge.stderr().includes('twylt-mcp: still left out'), 'a failed retry', 20_000);
      writeFileSync(marker, '');
      await waitFor(() => bridge.stderr().includes('twylt-mcp: described again, now serving "late"'), 'the tool to join', 20_000);
      expect(await toolNames(client)).toEqual(['late', 'sleeper']);
      const result = await client.callTool({ name: 'late', arguments: { text: 'over http' } });
      expect(result.structuredContent).toEqual({ text: 'over http' });
      await client.close();
    } finally {
      const { code } = await bridge.stop();
      expect(code).toBe(143);
    }
    expect(describePids(log).filter(isRunning)).toEqual([]);
  });
});
