/**
 * The calls made since the server started, newest last, for the page's history. Bounded:
 * the oldest calls are forgotten once the records pass a size a browser tab can hold.
 */
import type { CallRecord } from './types.js';

/** Enough for hundreds of ordinary calls; one record holds at most a tool's output limits. */
const HISTORY_LIMIT_BYTES = 64 * 1024 * 1024;

export class CallHistory {
  readonly #calls: { record: CallRecord; size: number }[] = [];
  #size = 0;
  #nextId = 1;
  readonly #limit: number;

  constructor(limitBytes = HISTORY_LIMIT_BYTES) {
    this.#limit = limitBytes;
  }

  /** The id of the next call; ids count calls as they start, so they follow the clock. */
  nextId(): number {
    return this.#nextId++;
  }

  add(record: CallRecord): void {
    const size = recordSize(record);
    this.#calls.push({ record, size });
    this.#size += size;
    // Keep the newest call even when it alone is over the limit.
    while (this.#size > this.#limit && this.#calls.length > 1) this.#size -= this.#calls.shift()!.size;
  }

  /** Every kept call, in the order they finished. */
  list(): CallRecord[] {
    return this.#calls.map((entry) => entry.record);
  }
}

/** Roughly the bytes a record takes (its texts dominate). */
function recordSize(record: CallRecord): number {
  return 2 * (record.input.length + record.stderr.length + (record.output ? record.output.text.length + record.output.pretty.length : 0)) + 1024;
}
