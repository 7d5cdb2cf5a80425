/**
 * A failed spawn is a failed call, never a crash (issue 34 item 6), from the source: the
 * consumer's call path (runProcess, spawnTool, the sandbox's wrap) in this test process.
 *
 * - ENOMEM cannot be provoked reliably (the kernel refuses fork for memory only under real
 *   pressure), so it is injected at the narrowest seam: `spawn` of node:child_process, mocked
 *   to throw once exactly what Node.js throws then (ENOMEM is thrown at once, not emitted).
 * - A call whose cgroup cannot be joined is real: the real bwrap, a plain folder standing in
 *   for the cgroup (as in limits.unit.test.ts), its `cgroup.procs` a folder so that writing
 *   bwrap's pid there fails (EISDIR; root could write a read-only file).
 *
 * Each asserts the normalized error, that nothing is left behind (the sandbox's bwrap gone,
 * the call's cgroup removed, no pipe left open) and that the next call is served.
 * EMFILE and EAGAIN are real faults in the consumer's own process: tests/sandbox/proxy.test.ts
 * and tests/client/spawn-faults.test.ts.
 */
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { SpawnError } from '../../packages/twylt/src/client/errors.js';
import { runProcess } from '../../packages/twylt/src/client/process.js';
import { spawnFailure } from '../../packages/twylt/src/protocol/runtime.js';
import type { SandboxedProcess, SpawnSandbox } from '../../packages/twylt/src/client/spawn.js';
import { prepareSandbox, type PreparedSandbox } from '../../packages/twylt/src/toolset/sandbox/bwrap.js';
import type { CgroupBase } from '../../packages/twylt/src/toolset/sandbox/limits.js';
import { isRunning, waitFor } from '../support/mcp.js';
import { SANDBOX_SKIP_REASON } from '../sandbox/support.js';

/** The fault the next spawn of node:child_process throws, once. */
const fault = vi.hoisted(() => ({ next: undefined as string | undefined }));
vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:child_process')>();
  const { constants: os } = await import('node:os');
  return {
    ...real,
    spawn: (...args: Parameters<typeof real.spawn>) => {
      const code = fault.next;
      if (code === undefined) return real.spawn(...args);
      fault.next = undefined;
      // As lib/internal/child_process.js throws it: new ErrnoException(err, 'spawn').
      throw Object.assign(new Error(`spawn ${code}`), { code, errno: -os.errno[code as keyof typeof os.errno], syscall: 'spawn' });
    },
  };
});

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-spawn-faults-')));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const opened: PreparedSandbox[] = [];
afterEach(async () => {
  fault.next = undefined;
  for (const sandbox of opened.splice(0)) await sandbox.close();
});

const ECHO = ['/bin/echo', 'served'];
const openFds = () => readdirSync('/proc/self/fd').length;

/** A sandbox with the real bwrap whose call cgroups are made in a plain folder. */
async function sandboxWithCgroup(): Promise<{ sandbox: PreparedSandbox; dir: string }> {
  const dir = mkdtempSync(join(scratch, 'cgroup-'));
  const sandbox = await prepareSandbox({ memoryMb: 64, processes: 0, cpuSeconds: 0 }, { bwrap: '/usr/bin/bwrap', cgroup: { version: 2, dirs: [dir] } satisfies CgroupBase });
  opened.push(sandbox);
  // The probe's own call cgroup keeps its files (a plain folder is no cgroup): left aside.
  for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true });
  return { sandbox, dir };
}

/**
 * The call's cgroup is removed once its limits' files are: a plain folder keeps the files a
 * real cgroup's kernel takes away with it, so the test empties it and the sandbox's removal
 * (at once, then retried) must take the folder. A sandbox that never freed it leaves it there.
 */
async function expectRemoved(dir: string): Promise<void> {
  for (const call of readdirSync(dir)) for (const name of readdirSync(join(dir, call))) rmSync(join(dir, call, name), { recursive: true });
  await waitFor(() => readdirSync(dir).length === 0, `the call's cgroup in ${dir} to be removed`, 7_000);
}

describe('ENOMEM (injected: spawn throws at once, as Node.js does for it)', () => {
  it('unsandboxed: the call fails with a SpawnError naming the tool and ENOMEM; the next call is served', async () => {
    const before = openFds();
    fault.next = 'ENOMEM';
    const error = await runProcess(ECHO).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(SpawnError);
    expect((error as SpawnError).message).toBe('cannot run /bin/echo: spawn ENOMEM');
    expect(((error as Error).cause as NodeJS.ErrnoException).errno).toBe(-constants.errno.ENOMEM);
    expect(openFds()).toBe(before);
    const next = await runProcess(ECHO);
    expect({ exitCode: next.exitCode, stdout: next.stdout }).toEqual({ exitCode: 0, stdout: 'served\n' });
  });

  it.skipIf(SANDBOX_SKIP_REASON !== undefined)(`sandboxed with a cgroup: the same error, the call's cgroup freed; the next call is served${SANDBOX_SKIP_REASON ? ` (skipped: ${SANDBOX_SKIP_REASON})` : ''}`, async () => {
    const { sandbox, dir } = await sandboxWithCgroup();
    const tool = sandbox.forTool();
    fault.next = 'ENOMEM';
    const error = await runProcess(ECHO, { sandbox: tool }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(SpawnError);
    // Node.js names no file for it (bwrap here); the consumer names the tool it was asked to run.
    expect((error as SpawnError).message).toBe('cannot run /bin/echo: spawn ENOMEM');
    await expectRemoved(dir);
    const next = await runProcess(ECHO, { sandbox: tool });
    expect({ exitCode: next.exitCode, stdout: next.stdout }).toEqual({ exitCode: 0, stdout: 'served\n' });
    await expectRemoved(dir);
  }, 60_000);
});

describe.skipIf(SANDBOX_SKIP_REASON !== undefined)(`a call cgroup that cannot be joined (the real bwrap)${SANDBOX_SKIP_REASON ? ` (skipped: ${SANDBOX_SKIP_REASON})` : ''}`, () => {
  it("fails the call with a SpawnError saying why; bwrap is killed, the cgroup removed, no pipe left open; the next call is served", async () => {
    const { sandbox, dir } = await sandboxWithCgroup();
    const tool = sandbox.forTool();
    const bwraps: number[] = [];
    let procs = '';
    /** The tool's sandbox, with the call's cgroup.procs made a folder between the wrap and the start. */
    const obstructed: SpawnSandbox = {
      wrap: (command, options) => {
        const wrapped = tool.wrap(command, options);
        const [call] = readdirSync(dir);
        procs = join(dir, call!, 'cgroup.procs');
        mkdirSync(procs);
        const started = (child: Parameters<SandboxedProcess['started']>[0]) => {
          bwraps.push(child.pid!);
          wrapped.started(child);
        };
        return { ...wrapped, started } satisfies SandboxedProcess;
      },
    };
    const before = openFds();
    const error = await runProcess(ECHO, { sandbox: obstructed }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(SpawnError);
    expect((error as SpawnError).message).toBe(
      `cannot run /bin/echo: spawn /bin/echo EISDIR: the sandbox could not put it in its call's cgroup, so it never ran (EISDIR: illegal operation on a directory, open '${procs}')`,
    );
    expect(((error as Error).cause as NodeJS.ErrnoException).code).toBe('EISDIR');
    expect(bwraps).toHaveLength(1);
    await waitFor(() => !isRunning(bwraps[0]!), `bwrap (pid ${bwraps[0]}) to be killed`, 5_000);
    await expectRemoved(dir);
    await waitFor(() => openFds() <= before, `the test process's descriptors back to ${before} (the call's pipes closed)`, 5_000);
    const next = await runProcess(ECHO, { sandbox: tool });
    expect({ exitCode: next.exitCode, stdout: next.stdout }).toEqual({ exitCode: 0, stdout: 'served\n' });
    await expectRemoved(dir);
  }, 60_000);
});

describe("spawnFailure: the words of a failed spawn name the tool, not the sandbox's launcher", () => {
  /** An error as Node.js emits it for a spawn of `path` that failed with `code`. */
  const emitted = (path: string, code: string) => Object.assign(new Error(`spawn ${path} ${code}`), { code, path, syscall: `spawn ${path}` });
  const rows: [string, NodeJS.ErrnoException, string][] = [
    ["the launcher out of processes: the tool's", emitted('/usr/bin/prlimit', 'EAGAIN'), 'spawn /t EAGAIN'],
    ["bwrap out of memory: the tool's", emitted('/usr/bin/bwrap', 'ENOMEM'), 'spawn /t ENOMEM'],
    ["out of descriptors, the consumer's or the system's", emitted('/usr/bin/bwrap', 'ENFILE'), 'spawn /t ENFILE'],
    ['EMFILE alike', emitted('/usr/bin/bwrap', 'EMFILE'), 'spawn /t EMFILE'],
    ["a launcher that is missing is the launcher's (never the tool said missing)", emitted('/usr/bin/bwrap', 'ENOENT'), 'spawn /usr/bin/bwrap ENOENT'],
    ['the tool itself', emitted('/t', 'EAGAIN'), 'spawn /t EAGAIN'],
    ['a message of its own is kept', Object.assign(new Error('spawn /usr/bin/bwrap EAGAIN: more'), { code: 'EAGAIN', path: '/usr/bin/bwrap' }), 'spawn /usr/bin/bwrap EAGAIN: more'],
    ["thrown at once, Node's words", Object.assign(new Error('spawn E2BIG'), { code: 'E2BIG', syscall: 'spawn' }), 'spawn E2BIG'],
    ["another runtime's words: Node's form", Object.assign(new Error('Resource temporarily unavailable'), { code: 'EAGAIN' }), 'spawn /t EAGAIN'],
  ];
  for (const [what, error, expected] of rows) {
    it(what, () => expect(spawnFailure(error, '/t')).toBe(expected));
  }
});
