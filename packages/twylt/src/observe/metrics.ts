/**
 * The bridge's metrics (docs/observability.md lists them), fed by the core's channels.
 * Label values come from the catalog (tool names as configured), from fixed vocabularies
 * (failure kinds, JSON-RPC codes, refusal reasons) or from exit codes: never from what a
 * caller sent.
 */
import type { ChildProcess } from 'node:child_process';
import { AbortError, TimeoutError } from '../client/errors.js';
import {
  CHANNEL,
  callChannel,
  queueChannel,
  refusalChannel,
  requestChannel,
  searchChannel,
  spawnChannel,
  spawnedChannel,
  warmChannel,
  type CallMessage,
  type ProcessMessage,
  type QueueMessage,
  type RefusalMessage,
  type RequestMessage,
  type SandboxRefusalMessage,
  type SearchMessage,
  type WarmMessage,
} from '../events/channels.js';
import { errorTypeOf } from './error-type.js';
import { Counter, Gauge, Histogram, Registry } from './registry.js';
import { LABEL, METRIC } from './names.js';
import { bindScopes, currentScope, toolOf } from './scope.js';
import { Subscriptions } from './subscriptions.js';

/** The OTel MCP conventions' advice for mcp.server.operation.duration, in seconds. */
export const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
/** Process launches are milliseconds: finer buckets. */
const STARTUP_BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1];
/** A lexical search takes well under a millisecond; a hybrid one waits for the endpoint (its time-out, 1 s by default). */
const SEARCH_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2];
const SEARCH_RESULT_BUCKETS = [0, 1, 2, 3, 5, 10, 20];
const TOOL = LABEL.tool;
const SANDBOX_REASONS = new Set(['memory', 'processes', 'cpu_time', 'network']);

export interface Collecting {
  registry: Registry;
  /** Unsubscribe from every channel: the registry counts nothing more. */
  close(): void;
}

/** Subscribe to every channel; the registry is what the endpoint renders. */
export function collectMetrics(): Collecting {
  const unbindScopes = bindScopes();
  const subscriptions = new Subscriptions();
  const registry = new Registry();
  const operation = registry.add(
    new Histogram(METRIC.operationDuration, 'MCP request duration as observed on the server, from its arrival to its answer.', [LABEL.method, TOOL, LABEL.errorType], DURATION_BUCKETS),
  );
  const calls = registry.add(new Counter(METRIC.calls, 'Tool calls finished, by tool and failure kind (none: a success).', [TOOL, LABEL.errorType]));
  const callSeconds = registry.add(new Histogram(METRIC.callDuration, 'Tool call duration, from the runner taking it (after any queue) to its result.', [TOOL], DURATION_BUCKETS));
  const inFlight = registry.add(new Gauge(METRIC.inFlight, 'Tool calls running now (past the queue).', [TOOL]));
  const queued = registry.add(new Gauge(METRIC.queueWaiting, 'Calls waiting for a free slot (queue depth).'));
  const queueSeconds = registry.add(new Histogram(METRIC.queueWait, 'Time a queued call waited for its slot.', [], DURATION_BUCKETS));
  const queueRefusals = registry.add(new Counter(METRIC.queueRefusals, 'Calls refused because every slot was busy and the queue full (JSON-RPC -32010).', [TOOL]));
  const timeouts = registry.add(new Counter(METRIC.timeouts, 'Calls whose tool was killed at its time-out.', [TOOL]));
  const cancellations = registry.add(new Counter(METRIC.cancellations, 'Calls cancelled by their caller (the tool killed, or never started).', [TOOL]));
  const warm = registry.add(new Counter(METRIC.warmTakes, 'Calls that asked a warm pool for a process: hit (one was waiting) or miss (a cold start).', [TOOL, LABEL.result]));
  const exits = registry.add(new Counter(METRIC.exits, "Tool processes of calls ended, by exit code (or the signal that ended them).", [TOOL, LABEL.exitCode]));
  const processSeconds = registry.add(new Histogram(METRIC.processDuration, 'A call\'s tool process, from its input handed over (spawn for a cold start, take for a warm one) to its exit.', [TOOL, LABEL.start], DURATION_BUCKETS));
  const startup = registry.add(new Histogram(METRIC.startup, "Launch of a call's cold tool process: from spawn() to the operating system having started it.", [TOOL], STARTUP_BUCKETS));
  const sandbox = registry.add(new Counter(METRIC.sandboxRefusals, 'Tool runs stopped by the sandbox, by the limit they hit.', [LABEL.reason, TOOL]));
  const refusals = registry.add(new Counter(METRIC.httpRefusals, 'HTTP requests refused before MCP (authentication, OAuth scopes, Host...), by status and reason.', [LABEL.status, LABEL.reason]));

  const searchSeconds = registry.add(new Histogram(METRIC.searchDuration, 'Tool searches (twylt_search, twylt search), by ranking: lexical, or hybrid (lexical and embeddings fused).', [LABEL.ranking], SEARCH_BUCKETS));
  const searchResults = registry.add(new Histogram(METRIC.searchResults, 'Tools a search returned.', [LABEL.ranking], SEARCH_RESULT_BUCKETS));
  const searchFallbacks = registry.add(new Counter(METRIC.searchFallbacks, 'Searches that asked for embeddings and gave lexical results instead, by reason: timeout, error, pending (tool vectors not ready).', [LABEL.reason]));

  /** Catalog names seen in calls: the only tool names a label may take. */
  const known = new Set<string>();
  const began = new WeakMap<object, number>();
  const seconds = (key: object) => (performance.now() - (began.get(key) ?? performance.now())) / 1000;

  subscriptions.on(requestChannel.start, (message) => began.set(message as object, performance.now()));
  subscriptions.on(requestChannel.asyncEnd, (data) => {
    const message = data as RequestMessage;
    operation.observe({ [LABEL.method]: message.method, [TOOL]: message.tool, [LABEL.errorType]: message.errorType }, seconds(message));
  });

  subscriptions.on(searchChannel.start, (message) => began.set(message as object, performance.now()));
  subscriptions.on(searchChannel.asyncEnd, (data) => {
    const message = data as SearchMessage;
    searchSeconds.observe({ [LABEL.ranking]: message.ranking }, seconds(message));
    searchResults.observe({ [LABEL.ranking]: message.ranking }, message.results ?? 0);
    if (message.fallback) searchFallbacks.inc({ [LABEL.reason]: message.fallback });
  });

  subscriptions.on(callChannel.start, (data) => {
    const message = data as CallMessage;
    known.add(message.tool);
    began.set(message, performance.now());
    inFlight.add({ [TOOL]: message.tool }, 1);
  });
  subscriptions.on(callChannel.asyncEnd, (data) => {
    const message = data as CallMessage;
    const tool = { [TOOL]: message.tool };
    inFlight.add(tool, -1);
    callSeconds.observe(tool, seconds(message));
    calls.inc({ ...tool, [LABEL.errorType]: message.error === undefined ? undefined : errorTypeOf(message.error) });
    if (message.error instanceof TimeoutError) timeouts.inc(tool);
    if (message.error instanceof AbortError) cancellations.inc(tool);
  });

  subscriptions.on(queueChannel, (data) => {
    const message = data as QueueMessage;
    queued.set({}, message.queued);
    if (message.kind === 'wait') began.set(message.ticket, performance.now());
    else if (message.kind === 'start') queueSeconds.observe({}, seconds(message.ticket));
    else if (message.kind === 'refuse') queueRefusals.inc({ [TOOL]: toolOf(currentScope()) });
    else if (message.kind === 'leave') cancellations.inc({ [TOOL]: toolOf(currentScope()) });
  });

  subscriptions.on(warmChannel, (data) => {
    const message = data as WarmMessage;
    const tool = toolOf(currentScope());
    warm.inc({ [TOOL]: tool, [LABEL.result]: message.hit ? 'hit' : 'miss' });
    if (message.child) watchExit(message.child, tool, 'warm');
  });

  const spawning = new WeakMap<ProcessMessage, number>();
  subscriptions.on(spawnChannel, (data) => spawning.set(data as ProcessMessage, performance.now()));
  subscriptions.on(spawnedChannel, (data) => {
    const message = data as ProcessMessage;
    const tool = toolOf(currentScope());
    // A warm process started ahead, or a describe at start-up: no call of a tool to count.
    if (message.warm || tool === undefined || !message.child) return;
    const at = spawning.get(message) ?? performance.now();
    message.child.once('spawn', () => startup.observe({ [TOOL]: tool }, (performance.now() - at) / 1000));
    watchExit(message.child, tool, 'cold', at);
  });

  function watchExit(child: ChildProcess, tool: string | undefined, start: 'cold' | 'warm', at = performance.now()): void {
    child.once('exit', (code, signal) => {
      exits.inc({ [TOOL]: tool, [LABEL.exitCode]: code === null ? (signal ?? 'unknown') : String(code) });
      processSeconds.observe({ [TOOL]: tool, [LABEL.start]: start }, (performance.now() - at) / 1000);
    });
  }

  subscriptions.on(refusalChannel, (data) => {
    const message = data as RefusalMessage;
    refusals.inc({ [LABEL.status]: String(message.status), [LABEL.reason]: message.reason });
  });
  subscriptions.on(CHANNEL.sandboxRefusal, (data) => {
    const message = data as Partial<SandboxRefusalMessage>;
    const reason = typeof message.reason === 'string' && SANDBOX_REASONS.has(message.reason) ? message.reason : 'other';
    const tool = typeof message.tool === 'string' && known.has(message.tool) ? message.tool : toolOf(currentScope());
    sandbox.inc({ [LABEL.reason]: reason, [TOOL]: tool });
  });
  return {
    registry,
    close: () => {
      subscriptions.close();
      unbindScopes();
    },
  };
}
