/**
 * Reading all of this process's stdin, once: shared by the run loop (transport.ts), a
 * launcher (bootstrap/) and a built file's entry, which hands what it read to the run.
 */
import { fstatSync, read, statSync, type Stats } from 'node:fs';
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
 * fd 0 read without process.stdin, whose stream set-up costs every call a few ms, when it
 * is a regular file or /dev/null. Pipes, sockets and terminals are left to the stream: a
 * read waiting in the thread pool would keep process.exit, and so a SIGTERM, from ever
 * ending the process. `whole` is false when the stream must go on after `chunks`
 * (any error, EAGAIN included, and any other kind of file).
 */
async function readFd0(): Promise<{ chunks: Buffer[]; whole: boolean }> {
  const chunks: Buffer[] = [];
  let stat: Stats;
  try {
    stat = fstatSync(0);
    if (!stat.isFile() && !isDevNull(stat)) return { chunks, whole: false };
  } catch {
    return { chunks, whole: false };
  }
  // A file's size is known: one chunk holds it and one read fills it (+1 to meet EOF there).
  let chunk = Buffer.allocUnsafe(stat.isFile() ? stat.size + 1 : CHUNK);
  let filled = 0;
  let total = 0;
  try {
    for (;;) {
      if (filled === chunk.length) {
        chunks.push(chunk);
        total += filled;
        // Each chunk as large as all before it: few chunks, and one copy when they are joined.
        chunk = Buffer.allocUnsafe(Math.max(total, CHUNK));
        filled = 0;
      }
      const n = await readInto(chunk, filled);
      if (n === 0) break;
      filled += n;
    }
  } catch {
    chunks.push(chunk.subarray(0, filled));
    return { chunks, whole: false };
  }
  chunks.push(chunk.subarray(0, filled));
  return { chunks, whole: true };
}

function isDevNull(stat: Stats): boolean {
  return stat.isCharacterDevice() && stat.rdev === statSync('/dev/null').rdev;
}

function readInto(buffer: Buffer, offset: number): Promise<number> {
  return new Promise((resolve, reject) => {
    read(0, buffer, offset, buffer.length - offset, null, (error, n) => (error ? reject(error) : resolve(n)));
  });
}

function joinChunks(chunks: Buffer[]): Buffer {
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

async function readAll(stream: Readable, chunks: Buffer[]): Promise<Buffer> {
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return joinChunks(chunks);
}
