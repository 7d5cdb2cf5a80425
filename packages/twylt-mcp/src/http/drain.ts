/**
 * The exchanges in progress, and the bridge's shutdown: once draining, `idle()` resolves when
 * the last exchange ends (told by its end, not found by polling).
 */
import type { Exchange } from '../exchange.js';

export class Drainer {
  readonly #exchanges = new Set<Exchange>();
  #draining = false;
  #waiting: (() => void)[] = [];

  /** Set once the bridge is shutting down; never unset. */
  get draining(): boolean {
    return this.#draining;
  }

  start(): void {
    this.#draining = true;
  }

  add(exchange: Exchange): void {
    this.#exchanges.add(exchange);
  }

  /** The exchange is over (answered, or its client gone). */
  delete(exchange: Exchange): void {
    if (!this.#exchanges.delete(exchange) || this.#exchanges.size > 0) return;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resolve of waiting) resolve();
  }

  /** Resolves once no exchange is in progress: at once when none is. */
  idle(): Promise<void> {
    if (this.#exchanges.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Abort every exchange still in progress, which kills their tools. */
  closeAll(): void {
    for (const exchange of [...this.#exchanges]) exchange.close();
  }
}
