/**
 * MCP over stdio with the client's numbers kept exact. The SDK's StdioServerTransport reads
 * each message with JSON.parse, which rounds a client's integers beyond 2^53 before the
 * bridge sees them; this one reads them with `parseJson(line, 'text')` (ADR 0009). Writing is
 * plain JSON.stringify, which writes a JsonNumber's digits unchanged. Framing as the SDK's:
 * one JSON-RPC message per line.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { parseJson } from 'twylt/client';

/** The SDK's limit for one buffered message. */
const MAX_LINE_CHARS = 10 * 1024 * 1024;

export class ExactStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #input: Readable;
  readonly #output: Writable;
  readonly #decoder = new StringDecoder('utf8');
  #pending = '';

  constructor(input: Readable = process.stdin, output: Writable = process.stdout) {
    this.#input = input;
    this.#output = output;
  }

  async start(): Promise<void> {
    this.#input.on('data', this.#onData);
    this.#input.on('error', this.#onError);
  }

  readonly #onData = (chunk: Buffer): void => {
    this.#pending += this.#decoder.write(chunk);
    let newline: number;
    while ((newline = this.#pending.indexOf('\n')) !== -1) {
      const line = this.#pending.slice(0, newline).replace(/\r$/, '');
      this.#pending = this.#pending.slice(newline + 1);
      if (line.trim() !== '') this.#receive(line);
    }
    if (this.#pending.length > MAX_LINE_CHARS) {
      this.#onError(new Error(`an MCP message is longer than ${MAX_LINE_CHARS} characters`));
      void this.close();
    }
  };

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  #receive(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(parseJson(line, 'text'));
    } catch (error) {
      this.#onError(error as Error);
      return;
    }
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.#input.off('data', this.#onData);
    this.#input.off('error', this.#onError);
    if (this.#input.listenerCount('data') === 0) this.#input.pause();
    this.#pending = '';
    this.onclose?.();
  }
}
