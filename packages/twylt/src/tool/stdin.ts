/**
 * Reading all of this process's stdin, once: shared by the run loop (transport.ts), a
 * launcher (bootstrap/) and a built file's entry, which hands what it read to the run.
 */
import { closeSync, constants, fstatSync, openSync, read, statSync, type Stats } from 'node:fs';
import type { Readable } from 'node:stream';
import { fifoStream } from '../protocol/runtime.js';
import { takeReplayedStdin } from './hooks.js';

export type Stdin = Readable & { isTTY?: boolean };

/** Passed as `openStdin`, it says that stdin is this process's own: fd 0 may be read directly. */
export function processStdin(): Stdin {
  return process.stdin;
}

/**
 * All of stdin, or its first `limit` + 1 bytes when there is more: reading stops there, so
 * that endless or huge input costs no more memory than the limit (the caller refuses what
 * is longer than `limit`). The bytes a launcher replayed come first; null when stdin is a
 * terminal.
 */
export async function readStdin(openStdin: () => Stdin, limit: number): Promise<Buffer | null> {
  const replayed = takeReplayedStdin();
  if (replayed !== undefined) return replayed;
  const cap = limit + 1;
  let start: Buffer[] = [];
  if (openStdin === processStdin) {
    const direct = await readFd0(cap);
    if (direct.whole) return joinChunks(direct.chunks);
    start = direct.chunks;
  }
  const stdin = openStdin();
  return stdin.isTTY ? null : readAll(stdin, start, cap);
}

const CHUNK = 64 * 1024;

/**
 * Stdin read without process.stdin, whose stream set-up costs every call a few ms: a regular
 * file or /dev/null from fd 0, a pipe on Linux through a non-blocking descriptor of its own.
 * Nothing here ever waits on a writer: a read blocked in the thread pool would keep
 * process.exit, and so a SIGTERM, from ending the process. `whole` is false when the stream
 * must go on after `chunks`: a pipe with nothing to read yet (EAGAIN), any error, a socket,
 * a terminal. At most `cap` bytes are read.
 */
async function readFd0(cap: number): Promise<{ chunks: Buffer[]; whole: boolean }> {
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
  let chunk = Buffer.allocUnsafe(Math.min(stat.isFile() ? stat.size + 1 : CHUNK, cap));
  let filled = 0;
  let total = 0;
  let whole = true;
  try {
    for (;;) {
      if (filled === chunk.length) {
        chunks.push(chunk);
        total += filled;
        if (total >= cap) return { chunks, whole };
        // Each chunk as large as all before it: few chunks, and one copy when they are joined.
        chunk = Buffer.allocUnsafe(Math.min(Math.max(total, CHUNK), cap - total));
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

/** A FIFO opened non-blocking (`fd`, at `path`), read to its end or `limit` + 1 bytes without holding a thread. */
export async function readFifo(fd: number, path: string, limit: number): Promise<Buffer> {
  return readAll(await fifoStream(fd, path), [], limit + 1);
}

/** The rest of the stream after `chunks`, up to `cap` bytes in all; leaving the loop early destroys the stream. */
async function readAll(stream: Readable, chunks: Buffer[], cap: number): Promise<Buffer> {
  let total = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  if (total < cap) {
    for await (const chunk of stream) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      total += chunks.at(-1)!.length;
      if (total >= cap) break;
    }
  }
  return joinChunks(chunks);
}
