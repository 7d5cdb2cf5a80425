/**
 * The tools a running bridge serves, and the tools left out at start, described again in the
 * background until they can join (issue 22, ADR 0024).
 *
 * The rule: a left-out tool's first retry comes `firstMs` after start (default 5 s), each
 * failed one doubles the wait, up to 5 minutes (or `firstMs`, if that is longer), for as long
 * as the bridge runs. Each attempt is one describe with the describe time-out; a tool's next
 * attempt is scheduled only when the last one has settled, so there is never more than one
 * at once. `stop` clears the timers and aborts the describes in progress, killing their tools.
 */
import { UndescribedError, describeEntry, showCommand, type ToolEntry } from 'twylt/toolset';
import { DEFAULT_RETRY_MS, MAX_RETRY_MS } from './defaults.js';
import type { Log } from './log.js';
import { bridgeTool, type BridgeTool, type DescribeOptions } from './tools.js';

export { DEFAULT_RETRY_MS, MAX_RETRY_MS };

/** The served tools: a new array on each change, so that what was built from the old one stays valid. */
export class ServedTools {
  #tools: readonly BridgeTool[];
  readonly #listeners: (() => void)[] = [];

  constructor(tools: readonly BridgeTool[]) {
    this.#tools = tools;
  }

  get current(): readonly BridgeTool[] {
    return this.#tools;
  }

  /** Add a tool, unless its name is taken: then the problem, and nothing changes. */
  add(tool: BridgeTool): string | undefined {
    const { name } = tool.definition;
    const holder = this.#tools.find((served) => served.definition.name === name);
    if (holder) return `its name "${name}" is taken by ${showCommand(holder.runner.entry.command)}; give it another name with "name" in a config file`;
    this.#tools = [...this.#tools, tool];
    for (const listener of this.#listeners) listener();
    return undefined;
  }

  /** Told after every change. */
  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }
}

export interface RetryOptions extends DescribeOptions {
  /** The wait before the first retry (default DEFAULT_RETRY_MS). */
  describeRetryMs?: number;
}

export interface Retries {
  /** Stop retrying: no timer left, no describe running. */
  stop(): void;
}

/** Describe each left-out entry again, with the back-off above, until it joins `served`. */
export function retryLeftOut(leftOut: readonly ToolEntry[], served: ServedTools, options: RetryOptions): Retries {
  const log: Log = options.log ?? (() => {});
  const firstMs = options.describeRetryMs ?? DEFAULT_RETRY_MS;
  const maxMs = Math.max(MAX_RETRY_MS, firstMs);
  const controller = new AbortController();
  const timers = new Set<NodeJS.Timeout>();

  const schedule = (entry: ToolEntry, waitMs: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      void attempt(entry, waitMs);
    }, waitMs);
    // A bridge whose client is gone ends; a pending retry does not keep it alive.
    timer.unref();
    timers.add(timer);
  };

  const attempt = async (entry: ToolEntry, waitMs: number) => {
    const command = showCommand(entry.command);
    let tool: BridgeTool;
    try {
      const { name, spec, runner } = await describeEntry(entry, { defaults: options.defaults, signal: controller.signal });
      if (controller.signal.aborted) return;
      tool = bridgeTool(name, spec, runner, log);
    } catch (error) {
      if (controller.signal.aborted) return;
      if (error instanceof UndescribedError) {
        const nextMs = Math.min(waitMs * 2, maxMs);
        log(`still left out, described again in ${seconds(nextMs)}: ${error.message}`);
        schedule(entry, nextMs);
      } else {
        log(`stays out (${command}): ${(error as Error).message}`);
      }
      return;
    }
    const taken = served.add(tool);
    log(taken ? `stays out: "${tool.definition.name}" (${command}): ${taken}` : `described again, now serving "${tool.definition.name}" (${command})`);
  };

  for (const entry of leftOut) schedule(entry, firstMs);
  return {
    stop() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      controller.abort();
    },
  };
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}
