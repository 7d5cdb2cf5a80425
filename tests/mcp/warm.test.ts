/**
 * `twylt-mcp --warm` as a client sees it, and what is left when the bridge ends: no warm
 * process outlives it (stdin closed, SIGTERM, SIGKILL), and a warm process whose bridge is
 * SIGKILLed never runs its tool on the input.json in its working directory.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixture } from '../support/process.js';
import { startBridge, textOf, waitFor } from '../support/mcp.js';
import { isReadingStdin, waitGone } from '../support/processes.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-mcp-warm-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;

/** A config serving warm_probe with `warm` processes from a directory holding an input.json. */
function probeConfig(warm: number): { dir: string; config: string } {
  const dir = mkdtempSync(join(scratch, `d${dirs++}-`));
  writeFileSync(join(dir, 'input.json'), JSON.stringify({ note: 'from input.json' }));
  const config = join(dir, 'tools.json');
  writeFileSync(config, JSON.stringify({ tools: [{ command: fixture('warm_probe'), env: { WARM_PROBE_DIR: dir }, warm }] }));
  return { dir, config };
}

const marked = (dir: string, prefix: string) =>
  readdirSync(dir)
    .filter((name) => name.startsWith(prefix))
    .map((name) => Number(name.slice(prefix.length)));

/**
 * The pids of `count` warm processes, once each is loaded and waiting on its stdin (the
 * start-up describe's process marks its start too, and ends).
 */
async function waitingProcesses(dir: string, count: number): Promise<number[]> {
  const waiting = () => marked(dir, 'started-').filter(isReadingStdin);
  await waitFor(() => waiting().length >= count, `${count} warm processes to wait on stdin`, 30_000);
  return waiting();
}

describe('twylt-mcp --warm', () => {
  it('serves calls from warm processes, each call its own process', async () => {
    const { dir, config } = probeConfig(2);
    const bridge = await startBridge(['--config', config]);
    try {
      const warmed = await waitingProcesses(dir, 2);
      const answers = [];
      for (const note of ['one', 'two', 'three']) {
        answers.push(JSON.parse(textOf(await bridge.client.callTool({ name: 'warm_probe', arguments: { note } }))));
      }
      expect(answers.map((answer) => [answer.note, answer.calls])).toEqual([
        ['one', 1],
        ['two', 1],
        ['three', 1],
      ]);
      expect(warmed).toContain(answers[0].pid);
      expect(new Set(answers.map((answer) => answer.pid)).size).toBe(3);
    } finally {
      await bridge.close();
    }
  });

  const endings: [string, (bridge: Awaited<ReturnType<typeof startBridge>>) => Promise<void> | void][] = [
    ['its client closes stdin', (bridge) => bridge.close()],
    ['it gets SIGTERM', (bridge) => void process.kill(bridge.pid, 'SIGTERM')],
    ['it gets SIGKILL', (bridge) => void process.kill(bridge.pid, 'SIGKILL')],
  ];
  it.each(endings)('no warm process outlives the bridge when %s, and none runs on the input.json beside it', async (_, end) => {
    const { dir, config } = probeConfig(3);
    const bridge = await startBridge(['--config', config]);
    const pids = await waitingProcesses(dir, 3);
    await end(bridge);
    for (const pid of [bridge.pid, ...pids]) expect(await waitGone(pid, 15_000)).toBe(true);
    expect(marked(dir, 'ran-')).toEqual([]);
    await bridge.close().catch(() => {});
  });

  it('--help explains --warm, --max-warm and --warm-idle-ms', async () => {
    const { run } = await import('../support/process.js');
    const { BRIDGE_CLI } = await import('../support/mcp.js');
    const help = await run([process.execPath, BRIDGE_CLI, '--help']);
    for (const option of ['--warm N', '--max-warm N', '--warm-idle-ms MS']) expect(help.stdout).toContain(option);
    const wrong = await run([process.execPath, BRIDGE_CLI, '--warm', 'x', '--', 'true']);
    expect([wrong.code, wrong.stderr.split('\n')[0]]).toEqual([64, 'twylt-mcp: --warm takes a whole number; got "x"']);
  });
});
