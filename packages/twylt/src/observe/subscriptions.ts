/**
 * The channel subscriptions of one observer, kept so that its close() takes every one back:
 * a subscriber left behind would keep a closed registry counting and a shut-down tracer
 * making spans, and would keep the core publishing events nobody wants.
 */
import diagnostics, { type Channel } from 'node:diagnostics_channel';

type Handler = (message: unknown, name: string | symbol) => void;

export class Subscriptions {
  private readonly held: [Channel, Handler][] = [];

  /** Subscribe `handler` to `channel` (a Channel, or its name) until close(). */
  on(channel: Channel | string, handler: Handler): void {
    const target = typeof channel === 'string' ? diagnostics.channel(channel) : channel;
    target.subscribe(handler);
    this.held.push([target, handler]);
  }

  /** Unsubscribe every handler; safe to call twice. */
  close(): void {
    for (const [channel, handler] of this.held.splice(0)) channel.unsubscribe(handler);
  }
}
