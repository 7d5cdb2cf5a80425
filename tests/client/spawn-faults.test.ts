/**
 * A failed spawn is a failed call, never a crash (issue 34 item 6), as a real fault in a real
 * consumer: out of processes (EAGAIN). The real `twylt-mcp` over stdio runs as an unprivileged
 * user (RLIMIT_NPROC does not bind root) from a copy it can read (tests/support/unprivileged.ts);
 * once it serves, its process limit is set below what the user already runs
 * (`prlimit --pid PID --nproc=1`), so the kernel refuses its next fork. Both calls of a plain
 * and of a sandboxed tool fail with the spawn's error, the bridge stays up, and once the limit
 * is back both are served again.
 *
 * EMFILE: tests/sandbox/proxy.test.ts. ENOMEM (injected) and a call cgroup that cannot be
 * joined: tests/client/spawn-faults.unit.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleTool } from '../support/bundle-tool.js';
import { isRunning, startBridge, textOf, type Bridge } from '../support/mcp.js';
import { ROOT } from '../support/process.js';
import { asUser, UNPRIVILEGED_SKIP_REASON, type UnprivilegedCopy, unprivilegedCopy } from '../support/unprivileged.js';
import { SANDBOX_SKIP_REASON } from '../sandbox/support.js';

/**
 * A user with no name of its own: RLIMIT_NPROC counts every process of the user system-wide,
 * so neither nobody (the hostile suite) nor 65533 (fallback.test.ts) whose processes come and go.
 */
const USER = 65532;
const AS_USER = asUser(USER);

function skipReason(): string | undefined {
  const reason = SANDBOX_SKIP_REASON ?? UNPRIVILEGED_SKIP_REASON;
  if (reason) return reason;
  const probe = spawnSync(AS_USER[0]!, [...AS_USER.slice(1), 'bwrap', '--ro-bind', '/', '/', '--unshare-all', '--', 'true']);
  if (probe.error) return `setpriv (util-linux) cannot run: ${probe.error.message}`;
  if (probe.status !== 0) return `bubblewrap cannot make a sandbox as uid ${USER} here: ${probe.stderr.toString().trim()}`;
  return undefined;
}
const SKIP = skipReason();

describe.skipIf(SKIP !== undefined)(`out of processes (EAGAIN), the bridge as uid ${USER}${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let copy: UnprivilegedCopy;
  let bridge: Bridge;
  beforeAll(async () => {
    copy = unprivilegedCopy();
    const folder = copy.scratch('spawn-faults');
    const bundled = await bundleTool(join(ROOT, 'tests/fixtures/sandbox/greedy.ts'), folder);
    chmodSync(bundled, 0o644); // whatever the umask
    const command = [process.execPath, bundled];
    const config = join(folder, 'tools.json');
    writeFileSync(
      config,
      JSON.stringify({
        tools: [
          { command, name: 'plain', sandbox: false },
          { command, name: 'boxed', sandbox: { processes: 0 } },
        ],
      }),
    );
    chmodSync(config, 0o644);
    bridge = await startBridge(['--config', config], {}, [...AS_USER, process.execPath, copy.path('packages/twylt-mcp/dist/cli.js')], copy.root);
  }, 120_000);
  afterAll(async () => {
    await bridge?.close();
    copy?.remove();
  });

  const call = async (name: string) => {
    const result = await bridge.client.callTool({ name, arguments: { mb: 0, processes: 0 } }, undefined, { timeout: 60_000 });
    return { isError: result.isError === true, text: result.isError ? JSON.stringify(result.content) : textOf(result) };
  };
  /** The bridge's soft and hard limits of processes, from /proc. */
  const processLimits = () => /Max processes\s+(\S+)\s+(\S+)/.exec(readFileSync(`/proc/${bridge.pid}/limits`, 'utf8'))!.slice(1) as [string, string];
  const setSoftLimit = (value: string, hard: string) => {
    // As the bridge's own user: root here may lack CAP_SYS_RESOURCE over another's process.
    const result = spawnSync(AS_USER[0]!, [...AS_USER.slice(1), 'prlimit', '--pid', String(bridge.pid), `--nproc=${value}:${hard}`], { encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
  };

  it('each call fails with the spawn error (EAGAIN), sandboxed or not; the bridge stays up and serves the next calls once the limit is back', async () => {
    const served = JSON.stringify({ held: 0, started: 0 });
    // Served first: the keeper (spawn.ts) runs, so the fault below hits the tools' own spawns.
    for (const name of ['plain', 'boxed']) expect(await call(name)).toEqual({ isError: false, text: served });
    const [soft, hard] = processLimits();
    setSoftLimit('1', hard);
    try {
      for (const name of ['plain', 'boxed']) {
        const failed = await call(name);
        expect(failed.isError, failed.text).toBe(true);
        // The tool named, never the sandbox's launcher (bwrap, prlimit) that was spawned.
        expect(failed.text).toBe(JSON.stringify([{ type: 'text', text: `"${name}" could not be started: cannot run ${process.execPath}: spawn ${process.execPath} EAGAIN` }]));
        // Still there a moment later: the spawn's 'error' event was not left unhandled.
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(isRunning(bridge.pid), `the bridge exited:\n${bridge.stderr()}`).toBe(true);
      }
    } finally {
      // A bridge that crashed has no limit to restore (and the failure above says so).
      if (isRunning(bridge.pid)) setSoftLimit(soft, hard);
    }
    for (const name of ['plain', 'boxed']) expect(await call(name)).toEqual({ isError: false, text: served });
  }, 180_000);
});
