/** Request bodies with a size limit: a client cannot make the server buffer without end. */
import type { IncomingMessage } from 'node:http';
import { parseJson } from '../client/json.js';

/**
 * The deepest nesting a request's JSON may have: far beyond any tool's input, and shallow
 * enough for every recursive walk of the value. A body of a few MB nested millions deep
 * would otherwise hold the event loop for seconds while it is parsed and walked.
 */
export const MAX_JSON_DEPTH = 1000;

/** The body was larger than allowed; answer 413. */
export class BodyTooLargeError extends Error {
  readonly limit: number;

  constructor(limit: number) {
    super(`the request body is larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
    this.limit = limit;
  }
}

/**
 * The whole body as text, or BodyTooLargeError as soon as it passes `limit` bytes. The rest
 * of a body too large is read and dropped, never destroyed with the request: the server
 * still answers 413 on its socket, whether the length was declared or the body came chunked.
 */
export function readBody(request: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    request.resume();
    return Promise.reject(new BodyTooLargeError(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return chunks.push(chunk);
      request.off('data', onData).off('end', onEnd).off('error', reject).off('close', onClose);
      request.resume();
      reject(new BodyTooLargeError(limit));
    };
    const onEnd = () => resolve(Buffer.concat(chunks).toString('utf8'));
    // Closed before its end: the client went away mid-body ('end' comes first otherwise).
    const onClose = () => reject(new Error('the client closed the connection before the whole body arrived'));
    request.on('data', onData).on('end', onEnd).on('error', reject).on('close', onClose);
  });
}

/**
 * A request's JSON, numbers kept as written (`parseJson(text, 'text')`). Nested deeper than
 * `maxDepth`, it is refused with a SyntaxError before any parsing: one linear scan.
 */
export function parseBoundedJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  if (nestedDeeperThan(text, maxDepth)) throw new SyntaxError(`the JSON is nested deeper than ${maxDepth} levels`);
  return parseJson(text, 'text');
}

function nestedDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (inString) {
      if (char === BACKSLASH) at++;
      else if (char === QUOTE) inString = false;
    } else if (char === QUOTE) inString = true;
    else if (char === OPEN_ARRAY || char === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (char === CLOSE_ARRAY || char === CLOSE_OBJECT) depth--;
  }
  return false;
}

const QUOTE = 0x22; // "
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
