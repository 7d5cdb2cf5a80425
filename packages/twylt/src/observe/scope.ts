/**
 * Which request and which call the code running now belongs to. Bound to the core's tracing
 * channels (`bindStore`), so an event published deep in a call (a process started, a warm
 * process taken) finds its call without the core passing anything along.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { callChannel, requestChannel, type CallMessage, type RequestMessage } from '../events/channels.js';

export interface Scope {
  request?: RequestMessage;
  call?: CallMessage;
  /** The tracing layer's span for this scope (its children's parent), if traces are on. */
  span?: unknown;
}

const storage = new AsyncLocalStorage<Scope>();
/** How many observers follow scopes now: the stores are bound while any does. */
let holders = 0;

/** Start following requests and calls; the function returned stops, once, for this caller. */
export function bindScopes(): () => void {
  if (holders++ === 0) {
    requestChannel.start.bindStore(storage, (request) => ({ request }));
    // A call inside a request keeps the request (and its span) as its parent.
    callChannel.start.bindStore(storage, (call) => ({ ...storage.getStore(), call }));
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holders > 0) return;
    requestChannel.start.unbindStore(storage);
    callChannel.start.unbindStore(storage);
  };
}

export function currentScope(): Scope | undefined {
  return storage.getStore();
}

/** The catalog name of the tool the scope's call runs, if any. */
export function toolOf(scope: Scope | undefined): string | undefined {
  return scope?.call?.tool ?? scope?.request?.tool;
}
