/** Request bodies with a size limit: a client cannot make the server buffer without end. */
import type { IncomingMessage } from 'node:http';

/** The body was larger than allowed; answer 413. */
export class BodyTooLargeError extends Error {
  readonly limit: number;

  constructor(limit: number) {
    super(`the request body is larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
    this.limit = limit;
  }
}

/** The whole body as text, or BodyTooLargeError as soon as it passes `limit` bytes. */
export async function readBody(request: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    request.resume();
    throw new BodyTooLargeError(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      request.resume();
      throw new BodyTooLargeError(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
