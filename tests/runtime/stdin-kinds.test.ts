/**
 * Every kind of file a tool's stdin can be: a regular file and /dev/null (read from fd 0
 * directly), a pipe (read without waiting, then the stream), a pipe or a socket that never
 * closes (a SIGTERM must still end the run), a non-blocking pipe whose data arrives late,
 * and input without end (/dev/zero), which the size limit stops. Readiness is read from
 * /proc (the tool waiting on its fd 0), so these tests need Linux.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readdirSync, readFileSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorOf, example, type Finished } from '../support/process.js';
import { bytesRead, waitUntilWaitingOnFifo, waitUntilRead, waitUntilReadingStdin } from '../support/processes.js';
import { NO_PYTHON_REASON, noPython, python } from '../support/python.js';
import { runtimeCannot } from '../support/runtimes.js';

const echo = example('echo');
const freshDir = () => mkdtempSync(join(tmpdir(), 'twylt-stdin-'));

interface Started {
  child: ReturnType<typeof spawn>;
  done: Promise<Finished>;
}

/** Starts argv with the given stdin; killed (SIGKILL) if it has not ended after 15 s. */
function start(argv: readonly string[], stdin: 'pipe' | 'ignore' | number, cwd?: string): Started {
  const child = spawn(argv[0]!, argv.slice(1), { cwd, stdio: [stdin, 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const done = new Promise<Finished>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    }),
  );
  return { child, done };
}

/** Runs argv with `fd` as its stdin, closing our copy of it. */
function runWithFd(argv: readonly string[], fd: number, cwd?: string): Promise<Finished> {
  const { done } = start(argv, fd, cwd);
  closeSync(fd);
  return done;
}


describe('stdin is a regular file', () => {
  it('is read whole from the current position of fd 0', async () => {
    const file = join(freshDir(), 'stdin.json');
    writeFileSync(file, 'SKIP{"text": "from a file"}');
    const fd = openSync(file, 'r');
    readSync(fd, Buffer.alloc(4), 0, 4, null); // the launcher of the tool read the first bytes
    const r = await runWithFd(echo, fd);
    expect(r).toMatchObject({ code: 0, stderr: '', stdout: '{\n  "text": "from a file"\n}\n' });
  });
  it('a large file (3 MB) arrives unchanged', async () => {
    const text = 'abcdefghij'.repeat(300_000) + 'é';
    const file = join(freshDir(), 'stdin.json');
    writeFileSync(file, JSON.stringify({ text }));
    const r = await runWithFd(echo, openSync(file, 'r'));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text });
  });
  it('invalid UTF-8 is a transport error, exit 4', async () => {
    const file = join(freshDir(), 'stdin.json');
    writeFileSync(file, Buffer.from([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]));
    const r = await runWithFd(echo, openSync(file, 'r'));
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stderr).error.exception.type).toBe('InvalidEncoding');
  });
  it('an empty file, and /dev/null, fall through to file mode', async () => {
    for (const empty of ['file', '/dev/null']) {
      const dir = freshDir();
      writeFileSync(join(dir, 'input.json'), '{"text": "input.json"}');
      writeFileSync(join(dir, 'empty'), '');
      const r = await runWithFd(echo, openSync(empty === 'file' ? join(dir, 'empty') : empty, 'r'), dir);
      expect(r, empty).toMatchObject({ code: 0, stdout: '', stderr: '' });
      expect(readFileSync(join(dir, 'output.json'), 'utf8')).toBe('{\n  "text": "input.json"\n}');
    }
  });
});

describe('stdin is a pipe', () => {
  it('from a shell pipeline, small and large (3 MB, more than a pipe holds), arrives unchanged', async () => {
    for (const text of ['through a pipe', 'abcdefghij'.repeat(300_000) + 'é']) {
      const file = join(freshDir(), 'stdin.json');
      writeFileSync(file, JSON.stringify({ text }));
      const quoted = echo.map((arg) => `'${arg}'`).join(' ');
      const r = await start(['sh', '-c', `cat '${file}' | exec ${quoted}`], 'ignore').done;
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ text });
    }
  });
  it('data written late, in pieces, then EOF: read whole', async () => {
    const fifo = join(freshDir(), 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK); // does not wait for a writer
    const writer = openSync(fifo, 'w');
    const { child, done } = start(echo, reader);
    closeSync(reader);
    const tool = await waitUntilReadingStdin(child.pid!);
    const before = bytesRead(tool);
    writeSync(writer, '{"text": ');
    await waitUntilRead(tool, before, '{"text": '.length);
    writeSync(writer, '"late"}');
    closeSync(writer);
    expect(await done).toMatchObject({ code: 0, stderr: '', stdout: '{\n  "text": "late"\n}\n' });
  });
});

describe('stdin that never closes', () => {
  // The tool waits for the end of stdin; SIGTERM must end it with the protocol's exit code.
  it('a pipe (FIFO) held open by us: SIGTERM ends the wait, exit 143', async () => {
    const fifo = join(freshDir(), 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const fd = openSync(fifo, 'r+'); // both ends: the tool never sees EOF
    const { child, done } = start(echo, fd);
    await waitUntilReadingStdin(child.pid!);
    child.kill('SIGTERM');
    const r = await done;
    closeSync(fd);
    expect(r).toMatchObject({ code: 143, signal: null, stdout: '', stderr: '' });
  });
  it('a socket (what Node gives a child for "pipe"): SIGTERM ends the wait, exit 143', async () => {
    const { child, done } = start(echo, 'pipe');
    await waitUntilReadingStdin(child.pid!);
    child.kill('SIGTERM');
    expect(await done).toMatchObject({ code: 143, signal: null, stdout: '', stderr: '' });
  });
});

describe('input.json is a FIFO (file mode)', () => {
  // The tool waits for a writer where SIGTERM's handler can still run: in epoll (Node), or in
  // a worker thread that its exit does not wait for (Bun, Deno). A blocking open on Node's
  // thread pool held it: only SIGKILL ended the tool.
  function fifoDir(): { dir: string; fifo: string } {
    const dir = freshDir();
    const fifo = join(dir, 'input.json');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    return { dir, fifo };
  }
  it('without a writer: SIGTERM ends the wait, exit 143, no output.json', async () => {
    const { dir, fifo } = fifoDir();
    const { child, done } = start(echo, 'ignore', dir);
    await waitUntilWaitingOnFifo(child.pid!, fifo);
    child.kill('SIGTERM');
    expect(await done).toMatchObject({ code: 143, signal: null, stdout: '', stderr: '' });
    expect(readdirSync(dir)).toEqual(['input.json']);
  });
  it('a writer that comes later is waited for and read', async () => {
    const { dir, fifo } = fifoDir();
    const { child, done } = start(echo, 'ignore', dir);
    await waitUntilWaitingOnFifo(child.pid!, fifo);
    writeFileSync(fifo, '{"text": "late"}');
    expect(await done).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(JSON.parse(readFileSync(join(dir, 'output.json'), 'utf8'))).toEqual({ text: 'late' });
  });
});

const nonBlockingSkip = noPython ? NO_PYTHON_REASON : runtimeCannot('wait on a non-blocking stdin');
describe.skipIf(nonBlockingSkip !== undefined)(`stdin is non-blocking (${nonBlockingSkip ?? 'python3 found'})`, () => {
  // A parent may leave O_NONBLOCK on the stdin it hands down; reads then fail with EAGAIN
  // until data arrives. Node's own spawn always hands a blocking stdin, hence Python here.
  const NONBLOCKING = [
    'import fcntl, os, subprocess, sys',
    'fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_NONBLOCK)',
    'sys.exit(subprocess.call(sys.argv[1:]))',
  ].join('\n');
  it('data written late, in pieces, is read whole', async () => {
    const { child, done } = start([python!, '-c', NONBLOCKING, ...echo], 'pipe');
    const tool = await waitUntilReadingStdin(child.pid!);
    const before = bytesRead(tool);
    child.stdin!.write('{"text": ');
    await waitUntilRead(tool, before, '{"text": '.length);
    child.stdin!.end('"late"}');
    expect(await done).toMatchObject({ code: 0, stderr: '', stdout: '{\n  "text": "late"\n}\n' });
  });
});

describe('stdin without end: reading stops at the size limit', () => {
  const expectTooLarge = (r: Finished, limit: number) => {
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).toBe('');
    expect(errorOf(r).exception).toMatchObject({ type: 'InputTooLarge', message: expect.stringContaining(`the limit of ${limit} bytes`) });
  };
  it('/dev/zero (a device, read through the stream) is refused at the default limit of 64 MiB, quickly', async () => {
    const started = Date.now();
    expectTooLarge(await runWithFd(echo, openSync('/dev/zero', 'r')), 64 * 1024 * 1024);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
  it('an endless pipe (yes) is refused at a small limit without waiting for an end', async () => {
    const quoted = echo.map((arg) => `'${arg}'`).join(' ');
    // `timeout`: a tool that never stops reading must not outlive the test (yes ends with it).
    expectTooLarge(await start(['sh', '-c', `yes | TWYLT_MAX_INPUT_BYTES=100000 timeout 12 ${quoted}`], 'ignore').done, 100_000);
  });
  it('a regular file larger than the limit is refused without being read whole', async () => {
    const file = join(freshDir(), 'stdin.json');
    writeFileSync(file, JSON.stringify({ text: 'x'.repeat(2000) }));
    const fd = openSync(file, 'r');
    const { done } = start(['sh', '-c', 'TWYLT_MAX_INPUT_BYTES=1000 exec "$@"', 'sh', ...echo], fd);
    closeSync(fd);
    expectTooLarge(await done, 1000);
  });
});
