/**
 * MCP over stdio with the client's numbers kept exact. The SDK's StdioServerTransport reads
 * each message with JSON.parse, which rounds a client's integers beyond 2^53 before the
 * bridge sees them; this one reads them with `parseJson(line, 'text')` (ADR 0009). Writing is
 * plain JSON.stringify, which writes a JsonNumber's digits unchanged. Framing as the SDK's:
 * one JSON-RPC message per line.
 *
 * A line that cannot be served (not JSON, not a JSON-RPC message, a request with params of
 * the wrong shape, longer than the limit) is answered with a JSON-RPC error, and the lines
 * after it are served as usual.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { parseBoundedJson } from 'twylt/server';
import { DEFAULT_MAX_MESSAGE_BYTES } from './defaults.js';
import { invalidParamsAnswer } from './invalid-params.js';

export { DEFAULT_MAX_MESSAGE_BYTES };

const NEWLINE = 0x0a;

export interface ExactStdioOptions {
  /** The largest message read, in bytes (its newline not counted); a longer one is refused. */
  maxMessageBytes?: number;
}

export class ExactStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #input: Readable;
  readonly #output: Writable;
  readonly #maxBytes: number;
  /** The bytes of the line read so far; dropped once the line is known to be too long. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #tooLong = false;

  constructor(input: Readable = process.stdin, output: Writable = process.stdout, options: ExactStdioOptions = {}) {
    this.#input = input;
    this.#output = output;
    this.#maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  async start(): Promise<void> {
    this.#input.on('data', this.#onData);
    this.#input.on('error', this.#onError);
    this.#input.once('end', this.#onEnd);
  }

  // Split on the newline byte, which never occurs inside a UTF-8 character: lengths are
  // counted in bytes, and a line is decoded once, whole.
  readonly #onData = (chunk: Buffer): void => {
    let start = 0;
    let newline: number;
    while ((newline = chunk.indexOf(NEWLINE, start)) !== -1) {
      this.#take(chunk.subarray(start, newline));
      this.#endLine();
      start = newline + 1;
    }
    this.#take(chunk.subarray(start));
  };

  /**
   * The client is gone: serve a last line that has no newline as any other line, then close,
   * which aborts the calls still running (killing their processes). The close waits one turn
   * of the event loop, as it does when EOF follows a newline, so that an answer made at once
   * (initialize, tools/list, a refusal) is written first.
   */
  readonly #onEnd = (): void => {
    if (this.#pendingBytes > 0) this.#endLine();
    setImmediate(() => void this.close());
  };

  #take(bytes: Buffer): void {
    if (this.#tooLong || bytes.length === 0) return;
    this.#pendingBytes += bytes.length;
    if (this.#pendingBytes > this.#maxBytes + 1) {
      // Past the limit (the +1 allows a CR before the newline): keep nothing more of it.
      this.#tooLong = true;
      this.#pending = [];
    } else {
      this.#pending.push(bytes);
    }
  }

  #endLine(): void {
    const line = Buffer.concat(this.#pending).toString('utf8').replace(/\r$/, '');
    const tooLong = this.#tooLong || Buffer.byteLength(line) > this.#maxBytes;
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#tooLong = false;
    if (tooLong) {
      this.#refuse(null, ErrorCode.InvalidRequest, `Invalid Request: a message is longer than ${this.#maxBytes} bytes, the limit of this bridge (--max-message-bytes); it was not read`);
    } else if (line.trim() !== '') {
      this.#receive(line);
    }
  }

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  #receive(line: string): void {
    let value: unknown;
    try {
      value = parseBoundedJson(line);
    } catch (error) {
      this.#refuse(null, ErrorCode.ParseError, `Parse error: the line is not JSON (${(error as Error).message})`);
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(value);
    if (!message.success) {
      const answer = invalidParamsAnswer(value);
      if (answer) this.#refuse(answer.id, answer.error.code, answer.error.message);
      else this.#refuse(idOf(value), ErrorCode.InvalidRequest, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response object');
      return;
    }
    this.onmessage?.(message.data);
  }

  /** Answer a line that is not served, and say so where the bridge logs. */
  #refuse(id: string | number | null, code: number, message: string): void {
    this.#onError(new Error(message));
    void this.#write({ jsonrpc: '2.0', id, error: { code, message } });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#write(message);
  }

  #write(message: object): Promise<void> {
    return new Promise((resolve) => {
      if (this.#output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.#input.off('data', this.#onData);
    this.#input.off('error', this.#onError);
    this.#input.off('end', this.#onEnd);
    if (this.#input.listenerCount('data') === 0) this.#input.pause();
    this.#pending = [];
    this.onclose?.();
  }
}

/** The id of a message that is not valid JSON-RPC, when it has a usable one. */
function idOf(value: unknown): string | number | null {
  const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}
