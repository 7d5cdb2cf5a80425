/**
 * Faults around a run (issue 8): a consumer that stops reading, signals during biz and
 * during the write of output.json, a working directory that refuses the write or is full,
 * and every kind of stdin a launcher may hand over.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, run, type Finished } from '../support/process.js';
import { NOBODY, UNPRIVILEGED_SKIP_REASON, type UnprivilegedCopy, unprivilegedCopy } from '../support/unprivileged.js';
import { expectProtocolOutcome, robustFixture, scratchDir, spawnCollect, STACK_LINE } from './support.js';

const tool = robustFixture('hostile');
const paused = robustFixture('pause_before_rename');
const isRoot = process.getuid?.() === 0;

/** Starts the tool in file mode and resolves once biz has said it started. */
function startInFileMode(dir: string): { child: ReturnType<typeof spawn>; started: Promise<void>; done: Promise<Finished> } {
  const child = spawn(tool[0]!, tool.slice(1), { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  const started = new Promise<void>((resolve) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk;
      if (stderr.includes('biz started')) resolve();
    });
  });
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk));
  const done = new Promise<Finished>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, started, done };
}

describe('the consumer closes stdout early (EPIPE)', () => {
  it('the tool exits quietly: exit 0, nothing on stderr', async () => {
    const child = spawn(tool[0]!, [...tool.slice(1), '{"action": "return_big", "size": 20000000}'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise((resolve) => child.on('close', (c) => resolve(c)));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
  it('a closed stderr does not turn a failure into a crash: the protocol exit code stays', async () => {
    const child = spawn(tool[0]!, [...tool.slice(1), '{"action": "throw_number"}'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr.destroy();
    const code = await new Promise((resolve) => child.on('close', (c) => resolve(c)));
    expect(code).toBe(5);
  });
});

describe('signals during biz in file mode', () => {
  for (const [signal, code] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
    it(`${signal}: exit ${code}, the old output.json is gone and nothing new is there`, async () => {
      const dir = scratchDir();
      writeFileSync(join(dir, 'input.json'), '{"action": "sleep", "ms": 20000}');
      writeFileSync(join(dir, 'output.json'), '{"previous": "run"}');
      const { child, started, done } = startInFileMode(dir);
      await started;
      child.kill(signal);
      const r = await done;
      expect(r.code).toBe(code);
      expect(r.stderr).toBe('biz started\n');
      expect(readdirSync(dir)).toEqual(['input.json']);
    });
  }
  it('a SIGTERM right before output.json is renamed into place: output.json is never seen partial; the run ends whole, no temporary file left', async () => {
    // The fixture stops in the runtime's rename of output.json and says so on stderr: the
    // signal arrives exactly between the complete temporary file and the rename. A writer
    // that fills output.json in place never reaches that point; one that lets the signal in
    // before the rename leaves the temporary file behind.
    const dir = scratchDir();
    const fifo = join(dir, 'pause.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    writeFileSync(join(dir, 'input.json'), '{"action": "return_big", "size": 2000000}');
    const child = spawn(paused[0]!, paused.slice(1), { cwd: dir, env: { ...process.env, PAUSE_FIFO: fifo }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const closed = new Promise<[number | null, string | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
    const renaming = new Promise<boolean>((resolve) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk;
        if (stderr.includes('renaming\n')) resolve(true);
      });
      void closed.then(() => resolve(false));
    });
    expect(await renaming, `the tool ended without renaming a temporary file onto output.json (not an atomic write):\n${stderr}`).toBe(true);
    const files = () => readdirSync(dir).filter((name) => name !== 'input.json' && name !== 'pause.fifo');
    // Paused: the whole result is in the temporary file; output.json does not exist yet.
    const [temporary, ...others] = files();
    expect(others).toEqual([]);
    expect(temporary).toMatch(/^\.output\.json\..+\.tmp$/);
    expect(JSON.parse(readFileSync(join(dir, temporary!), 'utf8')).value.length).toBe(2_000_000);
    child.kill('SIGTERM');
    const go = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK); // ENXIO, not a hang, if the tool is gone
    writeSync(go, 'g');
    closeSync(go);
    const [code, signal] = await closed;
    // The signal comes in once the synchronous write is over: the run ends with its result
    // (0) or with the signal's code (143); either way output.json is whole or absent, never partial.
    expect(signal).toBeNull();
    expect([0, 143]).toContain(code);
    const left = files();
    if (code === 0) expect(left).toEqual(['output.json']);
    if (left.length > 0) {
      expect(left).toEqual(['output.json']);
      expect(JSON.parse(readFileSync(join(dir, 'output.json'), 'utf8')).value.length).toBe(2_000_000);
    }
  });
});

describe('the working directory refuses output.json', () => {
  // root ignores permission bits, so as root the tool runs as nobody, from a copy that nobody
  // can read wherever the checkout is (issue 38); another user runs it as itself.
  const skip = isRoot ? UNPRIVILEGED_SKIP_REASON : undefined;
  const needs = skip ? ` (skipped: ${skip})` : '';
  let copy: UnprivilegedCopy | undefined;
  let runs = 0;
  let asTool = tool;
  beforeAll(() => {
    if (!isRoot || skip) return;
    copy = unprivilegedCopy(['build/tests/fixtures/robustness']);
    asTool = [process.execPath, copy.path('build/tests/fixtures/robustness/hostile.js')];
  });
  afterAll(() => copy?.remove());
  const runDir = () => (copy ? copy.scratch(`run-${++runs}`) : scratchDir());
  const asWho = () => (copy ? { uid: NOBODY.uid, gid: NOBODY.gid } : {});

  it.skipIf(skip !== undefined)(`read-only: exit 4, OutputFileUnwritable, nothing left behind${needs}`, async () => {
    const dir = runDir();
    writeFileSync(join(dir, 'input.json'), '{"action": "ok"}');
    chmodSync(dir, 0o555);
    const r = await spawnCollect(asTool, { ...asWho(), cwd: dir });
    chmodSync(dir, 0o755);
    expectProtocolOutcome(r);
    expect(r.code).toBe(4);
    expect(errorOf(r).exception).toEqual({ type: 'OutputFileUnwritable', message: 'Cannot write output.json: EACCES' });
    expect(readdirSync(dir)).toEqual(['input.json']);
  });
  it.skipIf(skip !== undefined)(`read-only with an old output.json: exit 4 before biz runs, OutputFileUnremovable${needs}`, async () => {
    const dir = runDir();
    writeFileSync(join(dir, 'input.json'), '{"action": "sleep", "ms": 0}');
    writeFileSync(join(dir, 'output.json'), 'old');
    chmodSync(dir, 0o555);
    const r = await spawnCollect(asTool, { ...asWho(), cwd: dir });
    chmodSync(dir, 0o755);
    expect(r.code).toBe(4);
    expect(r.stderr).not.toContain('biz started');
    expect(errorOf(r).exception).toEqual({ type: 'OutputFileUnremovable', message: 'Cannot remove the old output.json: EACCES' });
  });

  describe('a full disk', () => {
    // Mounted only when this test runs (never at file load, where a filtered run would leave it behind).
    let mountPoint = '';
    let mounted = false;
    beforeAll(() => {
      mountPoint = join(scratchDir(), 'full');
      mkdirSync(mountPoint);
      mounted = isRoot && spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint]).status === 0;
    });
    afterAll(() => {
      if (mounted) spawnSync('umount', [mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    });
    it('a full disk (1 MB tmpfs; skipped without root and mount): exit 4, ENOSPC, no partial file', async (context) => {
      if (!mounted) context.skip();
      writeFileSync(join(mountPoint, 'input.json'), '{"action": "return_big", "size": 4000000}');
      writeFileSync(join(mountPoint, 'output.json'), 'old');
      const r = await run(tool, { cwd: mountPoint });
      expect(r.code).toBe(4);
      expect(errorOf(r).exception).toEqual({ type: 'OutputFileUnwritable', message: 'Cannot write output.json: ENOSPC' });
      expect(readdirSync(mountPoint)).toEqual(['input.json']);
    });
  });
  it('a write that fails midway (file size limit, EFBIG; no privileges needed): exit 4, no partial file', async () => {
    const dir = scratchDir();
    writeFileSync(join(dir, 'input.json'), '{"action": "return_big", "size": 4000000}');
    // SIGXFSZ ignored, so the oversized write fails with EFBIG instead of killing the process.
    const r = await spawnCollect(['sh', '-c', 'trap "" XFSZ; ulimit -f 1024; exec "$@"', 'sh', ...tool], { cwd: dir });
    expect(r.code).toBe(4);
    expect(errorOf(r).exception).toEqual({ type: 'OutputFileUnwritable', message: 'Cannot write output.json: EFBIG' });
    expect(readdirSync(dir)).toEqual(['input.json']);
  });
});

describe('stdin of every kind falls through to file mode', () => {
  const fileModeDir = () => {
    const dir = scratchDir();
    writeFileSync(join(dir, 'input.json'), '{"action": "ok"}');
    return dir;
  };
  const expectFileModeSuccess = (dir: string, r: Finished) => {
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(JSON.parse(readFileSync(join(dir, 'output.json'), 'utf8'))).toEqual({ value: 'fine' });
  };
  it('a pipe closed without a byte', async () => {
    const dir = fileModeDir();
    expectFileModeSuccess(dir, await run(tool, { cwd: dir, input: '' }));
  });
  it('/dev/null', async () => {
    const dir = fileModeDir();
    expectFileModeSuccess(dir, await spawnCollect(tool, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }));
  });
  it('no stdin at all (fd 0 closed)', async () => {
    const dir = fileModeDir();
    expectFileModeSuccess(dir, await spawnCollect(['sh', '-c', 'exec "$@" <&-', 'sh', ...tool], { cwd: dir }));
  });
  const python = spawnSync('python3', ['-c', 'import pty'], { stdio: 'ignore' }).status === 0;
  it.skipIf(!python)('a terminal (a pty from python3; skipped without python3): never read, file mode', async () => {
    const dir = fileModeDir();
    const script = [
      'import os, pty, subprocess, sys',
      'master, slave = pty.openpty()',
      'p = subprocess.run(sys.argv[1:], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)',
      'sys.stdout.buffer.write(p.stdout); sys.stderr.buffer.write(p.stderr); sys.exit(p.returncode)',
    ].join('\n');
    expectFileModeSuccess(dir, await spawnCollect(['python3', '-c', script, ...tool], { cwd: dir }));
  });
  it.skipIf(!python)('a terminal does not stop a CLI payload', async () => {
    const script = [
      'import pty, subprocess, sys',
      'master, slave = pty.openpty()',
      'p = subprocess.run(sys.argv[1:], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)',
      'sys.stdout.buffer.write(p.stdout); sys.stderr.buffer.write(p.stderr); sys.exit(p.returncode)',
    ].join('\n');
    const r = await spawnCollect(['python3', '-c', script, ...tool, '{"action": "ok"}'], { cwd: scratchDir() });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ value: 'fine' });
    expect(r.stderr).not.toMatch(STACK_LINE);
  });
});
