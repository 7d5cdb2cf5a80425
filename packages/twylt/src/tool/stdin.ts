/**
 * Reading all of this process's stdin, once: shared by the run loop (transport.ts), a
 * launcher (bootstrap/) and a built file's entry, which hands what it read to the run.
 */
import { closeSync, constants, fstatSync, openSync, read, statSync, type Stats } from 'node:fs';
import type { Readable } from 'node:stream';
import { takeReplayedStdin } from './hooks.js';

export type Stdin = Readable & { isTTY?: boolean };

/** Passed as `openStdin`, it says that stdin is this process's own: fd 0 may be read directly. */
export function processStdin(): Stdin {
  return process.stdin;
}

/** All of stdin: the bytes a launcher replayed, else the whole input; null when stdin is a terminal. */
export async function readStdin(openStdin: () => Stdin): Promise<Buffer | null> {
  const replayed = takeReplayedStdin();
  if (replayed !== undefined) return replayed;
  let start: Buffer[] = [];
  if (openStdin === processStdin) {
    const direct = await readFd0();
    if (direct.whole) return joinChunks(direct.chunks);
    start = direct.chunks;
  }
  const stdin = openStdin();
  return stdin.isTTY ? null : readAll(stdin, start);
}

const CHUNK = 64 * 1024;

/**
 * Stdin read without process.stdin, whose stream set-up costs every call a few ms: a regular
 * file or /dev/null from fd 0, a pipe on Linux through a non-blocking descriptor of its own.
 * Nothing here ever waits on a writer: a read blocked in the thread pool would keep
 * process.exit, and so a SIGTERM, from ending the process. `whole` is false when the stream
 * must go on after `chunks`: a pipe with nothing to read yet (EAGAIN), any error, a socket,
 * a terminal.
 */
async function readFd0(): Promise<{ chunks: Buffer[]; whole: boolean }> {
  const chunks: Buffer[] = [];
  let fd: number;
  let stat: Stats;
  try {
    stat = fstatSync(0);
    fd = stat.isFile() || isDevNull(stat) ? 0 : stat.isFIFO() ? openPipe() : -1;
  } catch {
    return { chunks, whole: false };
  }
  if (fd === -1) return { chunks, whole: false };
  // A file's size is known: one chunk holds it and one read fills it (+1 to meet EOF there).
  let chunk = Buffer.allocUnsafe(stat.isFile() ? stat.size + 1 : CHUNK);
  let filled = 0;
  let total = 0;
  let whole = true;
  try {
    for (;;) {
      if (filled === chunk.length) {
        chunks.push(chunk);
        total += filled;
        // Each chunk as large as all before it: few chunks, and one copy when they are joined.
        chunk = Buffer.allocUnsafe(Math.max(total, CHUNK));
        filled = 0;
      }
      const n = await readInto(fd, chunk, filled);
      if (n === 0) break;
      filled += n;
    }
  } catch {
    whole = false;
  } finally {
    if (fd !== 0) closeSync(fd);
  }
  chunks.push(chunk.subarray(0, filled));
  return { chunks, whole };
}

/**
 * A descriptor of its own on the pipe at fd 0, non-blocking, so that O_NONBLOCK does not
 * change fd 0 for anyone sharing it. Linux only (/proc); elsewhere the stream reads pipes.
 */
function openPipe(): number {
  if (process.platform !== 'linux') return -1;
  return openSync('/proc/self/fd/0', constants.O_RDONLY | constants.O_NONBLOCK);
}

function isDevNull(stat: Stats): boolean {
  return stat.isCharacterDevice() && stat.rdev === statSync('/dev/null').rdev;
}

function readInto(fd: number, buffer: Buffer, offset: number): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, offset, buffer.length - offset, null, (error, n) => (error ? reject(error) : resolve(n)));
  });
}

function joinChunks(chunks: Buffer[]): Buffer {
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

async function readAll(stream: Readable, chunks: Buffer[]): Promise<Buffer> {
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return joinChunks(chunks);
}
