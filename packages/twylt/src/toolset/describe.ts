/**
 * Start-up of a tool set: describe every entry at once and check that each can be served.
 * Every problem is reported, each naming its tool's command: a consumer that silently
 * dropped a tool would leave its users guessing.
 */
import type { ToolSpec } from '../client/types.js';
import { isRecord } from '../protocol/record.js';
import { fingerprint } from './fingerprint.js';
import { showCommand, type ToolEntry } from './entry.js';
import type { ToolDefaults } from './policy.js';
import { createRunner, type ToolRunner } from './runner.js';

/** One tool of a described set. */
export interface DescribedTool {
  /** The name it is served under: the entry's `name`, else the published one. */
  name: string;
  spec: ToolSpec;
  runner: ToolRunner;
}

/** The tool set cannot be served; the message lists every tool at fault, one per line. */
export class ToolsetError extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ToolsetError';
    this.problems = problems;
  }
}

export interface DescribeToolsetOptions {
  /**
   * The consumer's defaults for every tool, handed on by reference: the same object for a
   * set and for each tool described again later, so that they share one warm cap.
   */
  defaults?: ToolDefaults;
  /**
   * The consumer's rule for names: a reason why `name` cannot be served, or undefined.
   * The message then says how to give the tool another name.
   */
  checkName?: (name: string) => string | undefined;
  /** Specs fetched earlier, shared across calls (see SpecCache). */
  cache?: SpecCache;
  /** How the consumer tells users to rename a tool; default: `"name" in a config file`. */
  renameHint?: string;
  /** Stops the describes still running, killing their tools (not with `cache`, whose fetches are shared). */
  signal?: AbortSignal;
  /**
   * Serve the rest when a tool cannot be described (it fails, or runs past its time-out):
   * such a tool is left out and its problem handed here, to be reported. Without it, any
   * such tool makes the whole set fail (the strict rule). Name problems are always fatal.
   */
  onUndescribed?: (problem: string, entry: ToolEntry) => void;
}

/** A tool whose describe failed (it may succeed later); a lenient consumer leaves it out. */
export class UndescribedError extends Error {
  constructor(
    message: string,
    readonly entry: ToolEntry,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'UndescribedError';
  }
}

/**
 * Describe all entries concurrently. Resolves with the tools in entry order, or rejects with
 * a ToolsetError naming every tool that cannot be described, lacks a schema or a name,
 * breaks `checkName`, or shares its name with another.
 */
export async function describeToolset(entries: readonly ToolEntry[], options: DescribeToolsetOptions = {}): Promise<DescribedTool[]> {
  if (entries.length === 0) throw new ToolsetError(['no tools given']);
  const rename = options.renameHint ?? 'with "name" in a config file';
  // One defaults object for the whole set, whatever the caller gave: one total of warm processes.
  if (!options.defaults) options = { ...options, defaults: {} };
  const settled = await Promise.allSettled(entries.map((entry) => describeOne(entry, options, rename)));
  const problems: string[] = [];
  const skipped: UndescribedError[] = [];
  for (const outcome of settled) {
    if (outcome.status === 'fulfilled') continue;
    const error = outcome.reason as Error;
    if (options.onUndescribed && error instanceof UndescribedError) skipped.push(error);
    else problems.push(error.message);
  }
  const tools = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  problems.push(...duplicateNames(tools, rename));
  // Nothing left to serve is no catalog: every problem is reported at once.
  if (problems.length > 0 || tools.length === 0) {
    for (const tool of tools) tool.runner.close();
    throw new ToolsetError([...problems, ...skipped.map((error) => error.message)]);
  }
  for (const error of skipped) options.onUndescribed!(error.message, error.entry);
  return tools;
}

/**
 * Describe one entry with the checks of a set (schemas, name, `checkName`), for a consumer
 * that describes a left-out tool again. Rejects with an UndescribedError when the describe
 * itself fails, with an Error when the tool cannot be served as it describes itself.
 */
export function describeEntry(entry: ToolEntry, options: DescribeToolsetOptions = {}): Promise<DescribedTool> {
  return describeOne(entry, options, options.renameHint ?? 'with "name" in a config file');
}

async function describeOne(entry: ToolEntry, options: DescribeToolsetOptions, rename: string): Promise<DescribedTool> {
  const label = `tool (${showCommand(entry.command)})`;
  let spec: ToolSpec;
  try {
    spec = (await cachedSpec(entry)) ?? (await fetchSpec(entry, options));
  } catch (error) {
    throw new UndescribedError(`cannot describe ${label}: ${(error as Error).message}`, entry, { cause: error });
  }
  if (!isRecord(spec) || !isRecord(spec.inputSchema) || !isRecord(spec.outputSchema)) {
    throw new Error(`cannot serve ${label}: its json_spec lacks an inputSchema or outputSchema object`);
  }
  const name = entry.name ?? spec.name;
  if (typeof name !== 'string' || name === '') throw new Error(`cannot serve ${label}: it publishes no name; give it one ${rename}`);
  const wrong = options.checkName?.(name);
  if (wrong) throw new Error(`cannot serve "${name}" (${showCommand(entry.command)}): ${wrong}; give it another name ${rename}`);
  return { name, spec, runner: createRunner(entry, options.defaults, spec) };
}

/** The describe runs under the entry's policy: its describe time-out, its environment. */
function fetchSpec(entry: ToolEntry, options: DescribeToolsetOptions): Promise<ToolSpec> {
  return options.cache ? options.cache.spec(entry, options.defaults) : createRunner(entry, options.defaults).spec({ signal: options.signal });
}

/** The spec a scan recorded, while the files and command it was recorded for are unchanged. */
async function cachedSpec(entry: ToolEntry): Promise<ToolSpec | undefined> {
  const cache = entry.describeCache;
  if (!cache) return undefined;
  return (await fingerprint(cache.inputs, entry)) === cache.hash ? cache.spec : undefined;
}

function duplicateNames(tools: readonly DescribedTool[], rename: string): string[] {
  const byName = new Map<string, DescribedTool[]>();
  for (const tool of tools) byName.set(tool.name, [...(byName.get(tool.name) ?? []), tool]);
  return [...byName]
    .filter(([, same]) => same.length > 1)
    .map(
      ([name, same]) =>
        `${same.length} tools are named "${name}": ${same.map((tool) => showCommand(tool.runner.entry.command)).join(' and ')}; ` +
        `rename all but one ${rename}`,
    );
}

/**
 * Specs by entry, for a consumer that builds tool sets again and again (a server making one
 * per request): each distinct entry is described once; a failed describe is not kept.
 */
export class SpecCache {
  readonly #specs = new Map<string, Promise<ToolSpec>>();

  spec(entry: ToolEntry, defaults: ToolDefaults = {}): Promise<ToolSpec> {
    const key = JSON.stringify([entry.command, entry.cwd ?? null, entry.env ?? null]);
    let pending = this.#specs.get(key);
    if (!pending) {
      pending = createRunner(entry, defaults).spec();
      this.#specs.set(key, pending);
      pending.catch(() => this.#specs.delete(key));
    }
    return pending;
  }

  /** Forget every spec: the next set describes its tools again. */
  clear(): void {
    this.#specs.clear();
  }
}
