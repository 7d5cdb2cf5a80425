/**
 * The limits where no cgroup is writable (ADR 0032, docs/sandbox.md "Without a cgroup"): the
 * real `twylt-mcp --sandbox` started where it cannot make a cgroup, serving a greedy tool.
 * As root, the bridge is started under bwrap with /sys/fs/cgroup read-only, or hidden under
 * an empty tmpfs; as another user (uid 65533, with no name), through setpriv. Memory then falls back to RLIMIT_DATA,
 * processes to RLIMIT_NPROC, and a processes limit as root (which NPROC does not bind) is a
 * refusal to start.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleTool } from '../support/bundle-tool.js';
import { bridgeCommand, bridgeEnv, startBridge, textOf } from '../support/mcp.js';
import { ROOT } from '../support/process.js';
import { asUser, NAMELESS_USER, UNPRIVILEGED_SKIP_REASON, type UnprivilegedCopy, unprivilegedCopy } from '../support/unprivileged.js';
import { SANDBOX_SKIP_REASON } from './support.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-sandbox-fallback-'));
let tool: string[];

/** The bridge where cgroups are read-only, or a plain empty folder. */
const WITHOUT_CGROUPS = {
  'read-only': ['bwrap', '--dev-bind', '/', '/', '--ro-bind', '/sys/fs/cgroup', '/sys/fs/cgroup', '--die-with-parent', '--'],
  'hidden under an empty tmpfs': ['bwrap', '--dev-bind', '/', '/', '--tmpfs', '/sys/fs/cgroup', '--die-with-parent', '--'],
};

function rootReason(): string | undefined {
  if (SANDBOX_SKIP_REASON) return SANDBOX_SKIP_REASON;
  if (process.getuid?.() !== 0) return 'the consumer is started without cgroups by bwrap as root, and this is not root';
  return undefined;
}

/**
 * Another user: no cgroup of its own, and RLIMIT_NPROC binds it. Not nobody itself, whose
 * process count the hostile suite's consumers share when both files run at once.
 */
const AS_ANOTHER_USER = asUser(NAMELESS_USER);

function nobodyReason(): string | undefined {
  const reason = rootReason() ?? UNPRIVILEGED_SKIP_REASON;
  if (reason) return reason;
  const probe = spawnSync(AS_ANOTHER_USER[0]!, [...AS_ANOTHER_USER.slice(1), 'bwrap', '--ro-bind', '/', '/', '--unshare-all', '--', 'true']);
  if (probe.error) return `setpriv (util-linux) cannot run: ${probe.error.message}`;
  if (probe.status !== 0) return `bubblewrap cannot make a sandbox as uid ${NAMELESS_USER} here: ${probe.stderr.toString().trim()}`;
  return undefined;
}

const ROOT_SKIP = rootReason();
const NOBODY_SKIP = nobodyReason();

beforeAll(async () => {
  mkdirSync(join(scratch, 'built'));
  tool = [process.execPath, await bundleTool(join(ROOT, 'tests/fixtures/sandbox/greedy.ts'), join(scratch, 'built'))];
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Run the bridge under `wrapper` to its end (it is expected not to serve): exit code and stderr. */
function runBridge(wrapper: readonly string[], args: string[]): Promise<{ code: number | null; stderr: string }> {
  const command = [...wrapper, ...bridgeCommand(), ...args];
  return new Promise((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, env: bridgeEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/** Call the greedy tool: its output, or the failure's text. */
async function greedy(bridge: Awaited<ReturnType<typeof startBridge>>, mb: number, processes: number): Promise<{ ok: boolean; text: string }> {
  const result = await bridge.client.callTool({ name: 'greedy', arguments: { mb, processes } });
  const content = result.content as Array<{ text?: string }>;
  return result.isError ? { ok: false, text: content.map((block) => block.text).join('\n') } : { ok: true, text: textOf(result) };
}

/** describeFailure's message of the `limit_exceeded` kind. */
const LIMIT_EXCEEDED = (limit: string) => `"greedy" was stopped: it reached the limit of ${limit} its sandbox allows`;

describe.skipIf(ROOT_SKIP !== undefined)(`as root without a writable cgroup${ROOT_SKIP ? ` (skipped: ${ROOT_SKIP})` : ''}`, () => {
  it('a processes limit (the default) is a refusal to start: exit 1, one line why, no stack trace', async () => {
    const { code, stderr } = await runBridge(WITHOUT_CGROUPS['read-only'], ['--sandbox', '--', ...tool]);
    expect(code, stderr).toBe(1);
    expect(stderr).toMatch(/cannot start: cannot limit processes: no writable cgroup here, and RLIMIT_NPROC does not bind root \(--sandbox-processes 0 runs without that limit\); refusing to run tools unsandboxed/);
    expect(stderr).not.toMatch(/\n\s+at /);
  }, 120_000);

  for (const [how, wrapper] of Object.entries(WITHOUT_CGROUPS)) {
    it(`cgroups ${how}: a memory hog is stopped by the memory limit (limit_exceeded), and the bridge serves on`, async () => {
      const bridge = await startBridge(['--sandbox', '--sandbox-processes', '0', '--sandbox-memory', '128', '--', ...tool], {}, [...wrapper, ...bridgeCommand()]);
      try {
        const hog = await greedy(bridge, 400, 0);
        expect(hog.ok, hog.text).toBe(false);
        expect(hog.text).toContain(LIMIT_EXCEEDED('memory'));
        expect(await greedy(bridge, 1, 0)).toEqual({ ok: true, text: JSON.stringify({ held: 1, started: 0 }) });
      } finally {
        await bridge.close();
      }
    }, 240_000);
  }
});

describe.skipIf(NOBODY_SKIP !== undefined)(`as another user (uid ${NAMELESS_USER}, like nobody), without a cgroup${NOBODY_SKIP ? ` (skipped: ${NOBODY_SKIP})` : ''}`, () => {
  // The user runs the bridge and the tool from a copy it can read, never from the checkout (issue 38).
  let copy: UnprivilegedCopy;
  let nobodyTool: string[];
  beforeAll(async () => {
    copy = unprivilegedCopy();
    const bundled = await bundleTool(join(ROOT, 'tests/fixtures/sandbox/greedy.ts'), copy.scratch('built'));
    chmodSync(bundled, 0o644); // whatever the umask
    nobodyTool = [process.execPath, bundled];
  });
  afterAll(() => copy?.remove());

  it('a fork bomb and a memory hog are each stopped by their limit (limit_exceeded), and the bridge serves on', async () => {
    const bridgeAsNobody = [...AS_ANOTHER_USER, process.execPath, copy.path('packages/twylt-mcp/dist/cli.js')];
    const bridge = await startBridge(['--sandbox', '--sandbox-processes', '64', '--sandbox-memory', '128', '--', ...nobodyTool], {}, bridgeAsNobody, copy.root);
    try {
      const bomb = await greedy(bridge, 0, 150);
      expect(bomb.ok, bomb.text).toBe(false);
      expect(bomb.text).toContain(LIMIT_EXCEEDED('number of processes'));
      const hog = await greedy(bridge, 400, 0);
      expect(hog.ok, hog.text).toBe(false);
      expect(hog.text).toContain(LIMIT_EXCEEDED('memory'));
      expect(await greedy(bridge, 1, 2)).toEqual({ ok: true, text: JSON.stringify({ held: 1, started: 2 }) });
    } finally {
      await bridge.close();
    }
  }, 240_000);
});
