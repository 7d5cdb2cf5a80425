/**
 * The exchanges in progress, and the bridge's shutdown: once draining, `idle()` resolves when
 * the last exchange ends (told by its end, not found by polling), and no request the bridge
 * has accepted is still on its way to one.
 */
import type { Server as NodeHttpServer } from 'node:http';
import type { Exchange } from '../exchange.js';

export class Drainer {
  readonly #exchanges = new Set<Exchange>();
  /**
   * What the drain also waits for: a connection accepted whose first request is not read yet
   * (its client sent it before the port closed; the docs promise it an answer), and a request
   * not yet answered, from its arrival until its exchange starts or its response ends.
   */
  readonly #pending = new Set<object>();
  #draining = false;
  #waiting: (() => void)[] = [];

  /** Set once the bridge is shutting down; never unset. */
  get draining(): boolean {
    return this.#draining;
  }

  start(): void {
    this.#draining = true;
  }

  /** Follow `server`'s connections and requests, so that none accepted is cut off by the drain's end. */
  watch(server: NodeHttpServer): void {
    server.on('connection', (socket) => {
      this.#pending.add(socket);
      socket.once('close', () => this.#settle(this.#pending, socket));
    });
    server.on('request', (request, response) => {
      // The response first: the connection's request is never, for a moment, neither.
      this.#pending.add(response);
      response.once('close', () => this.#settle(this.#pending, response));
      this.#settle(this.#pending, request.socket);
    });
  }

  add(exchange: Exchange): void {
    this.#exchanges.add(exchange);
  }

  /** The exchange is over (answered, or its client gone). */
  delete(exchange: Exchange): void {
    this.#settle(this.#exchanges, exchange);
  }

  /** Resolves once nothing is in progress: at once when nothing is. */
  idle(): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Abort every exchange still in progress, which kills their tools. */
  closeAll(): void {
    for (const exchange of [...this.#exchanges]) exchange.close();
  }

  #idle(): boolean {
    return this.#exchanges.size === 0 && this.#pending.size === 0;
  }

  #settle<T>(set: Set<T>, item: T): void {
    if (!set.delete(item) || !this.#idle()) return;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resolve of waiting) resolve();
  }
}
