/**
 * Step 3 of a run: where the input comes from (docs/TWYLT.md section 1), and the file-mode
 * edges (input.json in, output.json out, written atomically).
 */
import { closeSync, constants, fstatSync, fsyncSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ENV, FILE_INPUT, FILE_OUTPUT, MAX_JSON_DEPTH } from '../protocol/constants.js';
import { Fault, INPUT_FAULTS, TwyltError } from '../protocol/errors.js';
import { formatPath, type PathSegment } from '../protocol/issues.js';
import { EXACT_LIMIT, findInexactInteger, type InexactInteger } from '../protocol/integers.js';
import { jsonKind } from '../protocol/record.js';
import { decodeUtf8Strict } from '../protocol/utf8.js';
import { takeHandedRequest } from './hooks.js';
import type { JsonObject, Request } from './request.js';
import { readFifo, readStdin, type Stdin } from './stdin.js';

export { processStdin, readStdin, type Stdin } from './stdin.js';

export type { JsonObject, Request } from './request.js';

/**
 * The CLI payload, else stdin's, else null (file mode). Malformed input, or input larger than
 * `limit` bytes, is a transport error. `openStdin` is called only when stdin is needed:
 * setting up process.stdin costs start-up time.
 */
export async function readRequest(args: readonly string[], openStdin: () => Stdin, limit: number): Promise<Request | null> {
  const handed = takeHandedRequest();
  if (handed !== undefined) return handed;
  const first = args[0];
  if (isCliPayload(first)) {
    const where = 'the command-line argument';
    // A string of n characters is at most 3n bytes of UTF-8: most arguments need no count.
    if (first.length * 3 > limit && Buffer.byteLength(first) > limit) throw tooLarge(where, limit);
    return { source: 'cli', payload: parseObject(first, where) };
  }
  const bytes = await readStdin(openStdin, limit);
  if (bytes === null) return null;
  if (bytes.length > limit) throw tooLarge('stdin', limit);
  const text = decodeUtf8(bytes, 'stdin');
  if (text.trim() === '') return null;
  return { source: 'stdin', payload: parseObject(text, 'stdin') };
}

/** The first remaining argument is the payload only if it starts with `{` after leading whitespace. */
export function isCliPayload(first: string | undefined): first is string {
  return first !== undefined && first.trimStart().startsWith('{');
}

/** input.json from the working directory: missing, unreadable, malformed or larger than `limit` bytes is a transport error. */
export async function readInputFile(cwd: string, limit: number): Promise<unknown> {
  let bytes: Buffer | null;
  try {
    bytes = await readUpTo(join(cwd, FILE_INPUT), limit);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const fault = code === 'ENOENT'
      ? new Fault('InputFileMissing', `No input: no JSON argument, empty stdin and no ${FILE_INPUT} in the working directory`)
      : new Fault('InputFileUnreadable', `Cannot read ${FILE_INPUT}: ${code ?? 'unknown error'}`);
    throw new TwyltError('transport', { cause: fault });
  }
  if (bytes === null) throw tooLarge(FILE_INPUT, limit);
  return parseJson(decodeUtf8(bytes, FILE_INPUT), FILE_INPUT);
}

/**
 * A file's bytes, or null when it holds more than `limit` (reading stops there). A regular
 * file takes one read into a buffer of its size (the promise API reads in 512 KB round
 * trips); a FIFO waits for its writer without holding a thread, so SIGTERM's handler still
 * runs (a blocking open would hold it: see fifoStream); a device is read in chunks
 * until EOF or the limit.
 */
async function readUpTo(path: string, limit: number): Promise<Buffer | null> {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  let close = true;
  try {
    const stat = fstatSync(fd);
    if (stat.isFile()) {
      if (stat.size > limit) return null;
      const bytes = readFileSync(fd);
      return bytes.length > limit ? null : bytes;
    }
    if (stat.isFIFO()) {
      close = false; // the FIFO's stream owns the descriptor
      const bytes = await readFifo(fd, path, limit);
      return bytes.length > limit ? null : bytes;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 * 1024);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) return Buffer.concat(chunks, total);
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > limit) return null;
    }
  } finally {
    if (close) closeSync(fd);
  }
}

/** Any output.json from an earlier run goes first, so a failed run leaves none. */
export async function removeOutputFile(cwd: string): Promise<void> {
  try {
    await rm(join(cwd, FILE_OUTPUT), { force: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new TwyltError('transport', { cause: new Fault('OutputFileUnremovable', `Cannot remove the old ${FILE_OUTPUT}: ${code}`) });
  }
}

/**
 * output.json appears whole or not at all: the text goes to a temporary file beside it,
 * is flushed to disk, then renamed over the final name. Synchronous on purpose: a signal
 * handler (JavaScript) cannot run in the middle, and no file operation is left in flight in
 * the thread pool when it exits, so a SIGTERM leaves either the whole file or nothing.
 */
export async function writeOutputFile(cwd: string, text: string): Promise<void> {
  const target = join(cwd, FILE_OUTPUT);
  const temporary = join(cwd, `.${FILE_OUTPUT}.${process.pid}.${uniqueSuffix()}.tmp`);
  try {
    const fd = openSync(temporary, 'wx', 0o644);
    try {
      writeFileSync(fd, text, 'utf8');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new TwyltError('transport', { cause: new Fault('OutputFileUnwritable', `Cannot write ${FILE_OUTPUT}: ${code}`) });
  }
}

/**
 * 12 hex digits that make the temporary name unique beside the pid. Not node:crypto: loading
 * it costs every file-mode call several ms, and the exclusive create ('wx') already refuses
 * to reuse or follow an existing name.
 */
function uniqueSuffix(): string {
  return Math.floor(Math.random() * 2 ** 48).toString(16).padStart(12, '0');
}

function parseObject(text: string, where: string): JsonObject {
  const value = parseJson(text, where);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TwyltError('transport', { cause: new Fault('InvalidPayload', `The JSON on ${where} must be an object, got ${jsonKind(value)}`) });
  }
  return value as JsonObject;
}

function parseJson(text: string, where: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // JSON has no byte order mark, and the character is invisible in the parser's message.
    const reason = text.startsWith('\uFEFF') ? 'it starts with a byte order mark (BOM)' : (error as Error).message;
    throw new TwyltError('transport', { cause: new Fault('InvalidJSON', `Malformed JSON on ${where}: ${reason}`) });
  }
  const found = quickPass(value, 1);
  if (found === UNREADABLE) refuseUnreadable(value, where);
  if (found === LARGE) {
    const inexact = findInexactInteger(text);
    if (inexact) throw inexactInteger(where, inexact);
  }
  return value;
}

/** What the quick pass found, worst last: nothing, a number of 2^53 or more, something unreadable. */
const FINE = 0;
const LARGE = 1;
const UNREADABLE = 2;

/**
 * The quick pass over a parsed value: UNREADABLE when something in it is nested deeper than
 * MAX_JSON_DEPTH or is a number beyond double range, LARGE when a number may have lost
 * digits (EXACT_LIMIT). Allocates nothing; its recursion is bounded by that depth.
 * JSON.parse gives plain objects, so for-in sees their own keys.
 */
function quickPass(value: unknown, depth: number): number {
  if (typeof value === 'number') return !Number.isFinite(value) ? UNREADABLE : Math.abs(value) >= EXACT_LIMIT ? LARGE : FINE;
  if (typeof value !== 'object' || value === null) return FINE;
  if (depth > MAX_JSON_DEPTH) return UNREADABLE;
  let found = FINE;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = quickPass(value[i], depth + 1);
      if (item === UNREADABLE) return UNREADABLE;
      if (item === LARGE) found = LARGE;
    }
  } else {
    for (const key in value) {
      const item = quickPass((value as JsonObject)[key], depth + 1);
      if (item === UNREADABLE) return UNREADABLE;
      if (item === LARGE) found = LARGE;
    }
  }
  return found;
}

interface Container {
  value: object;
  depth: number;
  key?: PathSegment;
  parent?: Container;
}

/**
 * JSON.parse accepts what the run cannot carry faithfully: nesting deep enough to overflow
 * any recursive validator or writer, and numbers beyond double range, read as Infinity.
 * Once `readable` has found one, this walk, which keeps its own stack, says where.
 */
function refuseUnreadable(root: unknown, where: string): void {
  if (typeof root !== 'object' || root === null) {
    if (typeof root === 'number' && !Number.isFinite(root)) throw outOfRange(where, []);
    return;
  }
  const pending: Container[] = [{ value: root, depth: 1 }];
  for (let container = pending.pop(); container; container = pending.pop()) {
    if (container.depth > MAX_JSON_DEPTH) {
      throw new TwyltError('transport', { cause: new Fault(INPUT_FAULTS.tooDeep, `The JSON on ${where} is nested deeper than ${MAX_JSON_DEPTH} levels`) });
    }
    const entries: Iterable<[PathSegment, unknown]> = Array.isArray(container.value) ? container.value.entries() : Object.entries(container.value);
    for (const [key, value] of entries) {
      if (typeof value === 'object' && value !== null) pending.push({ value, depth: container.depth + 1, key, parent: container });
      else if (typeof value === 'number' && !Number.isFinite(value)) throw outOfRange(where, [...pathOf(container), key]);
    }
  }
}

function pathOf(container: Container): PathSegment[] {
  const path: PathSegment[] = [];
  for (let at: Container | undefined = container; at?.key !== undefined; at = at.parent) path.unshift(at.key);
  return path;
}

function outOfRange(where: string, path: PathSegment[]): TwyltError {
  return new TwyltError('transport', {
    cause: new Fault(INPUT_FAULTS.numberOutOfRange, `The JSON on ${where} has a number at ${formatPath(path)} beyond the range of a 64-bit float`),
  });
}

/** An integer JSON.parse would round: what it is, why, and how to send it instead (ADR 0021). */
function inexactInteger(where: string, { literal, value, path }: InexactInteger): TwyltError {
  const message =
    `The JSON on ${where} has the integer ${literal} at ${formatPath(path)}, which a JavaScript number cannot hold exactly ` +
    `(numbers are 64-bit floats: integers beyond 2^53 lose digits, this one would become ${BigInt(value)}); ` +
    'send it as a string, or use a tool runtime with exact integers';
  return new TwyltError('transport', { cause: new Fault(INPUT_FAULTS.inexactInteger, message) });
}

/** Input beyond the limit: what happened, the limit, and how to raise it. */
function tooLarge(where: string, limit: number): TwyltError {
  const message = `The input on ${where} is larger than the limit of ${limit} bytes; set ${ENV.maxInputBytes[0]} to a larger number of bytes to allow it`;
  return new TwyltError('transport', { cause: new Fault(INPUT_FAULTS.tooLarge, message) });
}

function decodeUtf8(bytes: Uint8Array, where: string): string {
  const text = decodeUtf8Strict(bytes);
  if (text === undefined) throw new TwyltError('transport', { cause: new Fault('InvalidEncoding', `${where} is not valid UTF-8`) });
  return text;
}

