/**
 * A scan: find the tools under folders (discover.ts), describe each one (at most `jobs` at
 * once, each with its own time-out), install what their requirements name when asked
 * (install.ts), and judge each: `ok`, `needs_install` (its launcher described it with empty
 * schemas and it declares requirements) or `failed`. A name found twice fails both tools:
 * a tool is never silently shadowed. Shared by `twylt scan`, `twylt-mcp --scan` and
 * `twylt inspect --scan`.
 */
import { readFile } from 'node:fs/promises';
import { delimiter, dirname, extname, relative } from 'node:path';
import { firstLine } from '../../client/errors.js';
import type { ToolSpec } from '../../client/types.js';
import { isRecord } from '../../protocol/record.js';
import { CallLimiter } from '../limiter.js';
import { createRunner } from '../runner.js';
import type { PreparedSandbox } from '../sandbox/bwrap.js';
import { discoverTools, type DiscoverOptions, type FoundTool } from './discover.js';
import { fingerprint } from '../fingerprint.js';
import { type EnvPlan, type InstallContext, defaultEnvsDir, envReady, installEnv, planEnv, planText } from './install.js';
import { type Interpreter, resolvePython } from './outside.js';
import { runCommand } from './runtime.js';
import { InstallSandboxes } from './sandboxed-install.js';
import { unmetNpm, unmetPip } from './satisfied.js';
import { defaultWorkspacesDir, makeWorkspace, workspaceOf } from './workspaces.js';

export type ScanStatus = 'ok' | 'needs_install' | 'failed';

/** One tool found, as the report shows it and the catalog records it. */
export interface ScannedTool {
  /** The name it is served under (a catalog's override, else the published one); null when unknown. */
  name: string | null;
  version: string | null;
  status: ScanStatus;
  /** The argv that runs it, its files by absolute paths; empty when no runtime could be found. */
  command: string[];
  /** Where it runs: its workspace (workspaces.ts), never its code's folder. */
  cwd: string;
  category: string;
  /** Why it is not `ok`, in one line; empty when it is. */
  reason: string;
  requirements: unknown;
  /** The entry file. */
  source: string;
  /** What the tool says it does: its describe's, else its manifest entry's; null when neither says. */
  description: string | null;
  /** The pack it belongs to (its manifest's name and version), when it has one. */
  pack?: { name: string; version?: string };
  /** What its calls need (PYTHONPATH, NODE_PATH of an installed environment). */
  env?: Record<string, string>;
  /** The describe the catalog caches, with the files it depends on. */
  spec?: ToolSpec;
  inputs: string[];
  hash?: string;
}

export interface ScanOptions extends DiscoverOptions {
  /** Time-out of each describe, in ms. */
  timeoutMs: number;
  /** Describes at once (at least 1). */
  jobs: number;
  /** Install the requirements of `needs_install` tools into the environment cache. */
  install?: boolean;
  /** The environment cache (default: defaultEnvsDir()). */
  envsDir?: string;
  /** The interpreter of Python tools (default python3, through PATH). */
  python?: string;
  /** The Node of JavaScript and TypeScript tools (default node, through PATH). */
  node?: string;
  /** Let npm run the install scripts of the packages it installs (off: --ignore-scripts). */
  allowInstallScripts?: boolean;
  /** Names given by hand (a catalog's `name`), by entry file: they win over the published ones. */
  names?: ReadonlyMap<string, string>;
  /** The root of the tools' workspaces (default: defaultWorkspacesDir()). */
  workspacesDir?: string;
  /** Put before the published names of the tools under a folder (absolute); the deepest folder wins. */
  prefixes?: readonly { dir: string; prefix: string }[];
  signal?: AbortSignal;
  /**
   * Describe every tool in this sandbox (prepareSandbox), in its own workspace; with
   * `install`, each install runs in a sandbox of its own too (sandboxed-install.ts).
   */
  sandbox?: PreparedSandbox;
  /** Told as the scan goes: how many tools were found, each install as it starts, each tool as it is done. */
  onProgress?: (event: ScanEvent) => void;
}

/** What a scan reports as it goes: `source` is a tool's entry file. */
export type ScanEvent =
  | { kind: 'found'; total: number }
  | { kind: 'installing'; source: string; installer: EnvPlan['installer'] }
  | { kind: 'judged'; source: string; finished: number; total: number };

/** Scan every folder; the tools in folder order, then path order. */
export async function scanTools(dirs: readonly string[], options: ScanOptions): Promise<ScannedTool[]> {
  const found = (await Promise.all(dirs.map((dir) => discoverTools(dir, options)))).flat();
  const limiter = new CallLimiter({ maxConcurrent: options.jobs, maxQueue: Number.MAX_SAFE_INTEGER });
  const context = installContext(options);
  const installs = new Map<string, Promise<Awaited<ReturnType<typeof installEnv>>>>();
  const sandboxes = options.install && options.sandbox ? new InstallSandboxes(options.sandbox.policy, context.python) : undefined;
  const progress = options.onProgress;
  progress?.({ kind: 'found', total: found.length });
  let finished = 0;
  const judged = (source: string) => (tool: Judged) => {
    progress?.({ kind: 'judged', source, finished: ++finished, total: found.length });
    return tool;
  };
  const scanned = await Promise.all(
    found.map(async (tool) => {
      const first = await judge(tool, undefined, limiter, options, context);
      if (first.status !== 'needs_install' || !first.plan) return first;
      const plan = first.plan;
      if (!options.install) {
        // An environment a `twylt scan --install` made already is used, never made here.
        if (!(await envReady(plan))) return first;
      } else {
        // One install per environment, however many tools share it.
        let pending = installs.get(plan.dir);
        if (!pending) {
          progress?.({ kind: 'installing', source: tool.source, installer: plan.installer });
          installs.set(plan.dir, (pending = installEnv(plan, context.envsDir, sandboxes?.place(plan.installer, tool.pack?.root ?? tool.root))));
        }
        const outcome = await pending;
        if (!outcome.ok) return { ...first, status: 'failed' as const, reason: `installing its requirements failed: ${outcome.reason}` };
      }
      const again = await judge(tool, withEnvironment(plan.env), limiter, options, context);
      if (again.status === 'needs_install') return { ...again, status: 'failed' as const, reason: `its schemas are still empty with its requirements installed in ${plan.dir}` };
      return again;
    }).map((pending, at) => pending.then(judged(found[at]!.source))),
  ).finally(() => sandboxes?.close());
  return markDuplicates(scanned.map(({ plan: _plan, ...tool }) => tool));
}

type Judged = ScannedTool & { plan?: EnvPlan };

/** Describe one tool (with `env` when given), in its workspace, and say what it is. */
async function judge(found: FoundTool, env: Record<string, string> | undefined, limiter: CallLimiter, options: ScanOptions, context: InstallContext): Promise<Judged> {
  const workspaces = options.workspacesDir ?? defaultWorkspacesDir();
  const cwd = workspaceOf(workspaces, found.source);
  const base: Judged = { name: found.listed?.name ?? null, version: null, description: found.listed?.description ?? null, status: 'failed', command: [], cwd, category: found.category, reason: '', requirements: null, source: found.source, inputs: found.inputs };
  if (found.pack) base.pack = { name: found.pack.name, ...(found.pack.version !== undefined ? { version: found.pack.version } : {}) };
  if (found.problem) return { ...base, reason: found.problem };
  const run = await runCommand(found.source, { python: options.python, node: options.node });
  if ('problem' in run) return { ...base, reason: run.problem };
  // The entry file by its absolute path: the tool runs in its workspace, not beside it.
  const command = run.command;
  const entry = { command, cwd, env, timeoutMs: options.timeoutMs };
  try {
    await makeWorkspace(workspaces, cwd);
  } catch (error) {
    return { ...base, command, env, reason: `cannot make its workspace: ${firstLine((error as Error).message)}` };
  }
  let spec: ToolSpec;
  try {
    spec = await limiter.run(() => createRunner(entry, { sandbox: options.sandbox }).spec({ signal: options.signal, timeoutMs: options.timeoutMs }), options.signal);
  } catch (error) {
    return { ...base, command, env, reason: `cannot describe it: ${firstLine((error as Error).message)}` };
  }
  const tool: Judged = { ...base, command, env, requirements: isRecord(spec) ? (spec.requirements ?? null) : null };
  if (!isRecord(spec) || !isRecord(spec.inputSchema) || !isRecord(spec.outputSchema)) return { ...tool, reason: 'its json_spec lacks an inputSchema or outputSchema object' };
  const name = options.names?.get(found.source) ?? (typeof spec.name === 'string' ? prefixOf(found.source, options) + spec.name : undefined);
  if (typeof name !== 'string' || name === '') return { ...tool, reason: 'it publishes no name; give it one with "name" in the catalog' };
  const described = { ...tool, name, version: typeof spec.version === 'string' ? spec.version : null, description: typeof spec.description === 'string' ? spec.description : tool.description, spec };
  if (isEmptySchema(spec.inputSchema) && isEmptySchema(spec.outputSchema)) {
    const plan = await planEnv(await installedRequirements(found, spec.requirements), context);
    if (!plan) return { ...described, status: 'failed', reason: 'it publishes empty schemas and declares no requirements to install' };
    if ('problem' in plan) return { ...described, status: 'failed', reason: plan.problem };
    return { ...described, status: 'needs_install', plan, reason: `its dependencies are missing; \`twylt scan --install ${shellWord(found.root)}\` installs them, running: ${planText(plan)}` };
  }
  // Described, but what it declares may be imported only when a call needs it: on the first
  // look (no environment given yet), a requirement not installed where it runs (for its
  // interpreter, or in its node_modules folders) makes it needs_install, so that --install
  // installs it or the report says it is missing.
  if (env === undefined) {
    const plan = await planEnv(await installedRequirements(found, spec.requirements), context);
    if (plan && !('problem' in plan) && plan.command.length > 0) {
      const specs = plan.command.slice(plan.command.indexOf('--') + 1);
      const [unmet, where] =
        plan.installer === 'pip'
          ? [await unmetPip(await context.python(), specs), `for ${(await context.python()).executable}`]
          : [await unmetNpm(found.source, specs), `in a node_modules folder from ${dirname(found.source)} up`];
      if (unmet.length > 0) {
        return { ...described, status: 'needs_install', plan, reason: `it declares ${unmet.join(', ')}, not installed ${where}; \`twylt scan --install ${shellWord(found.root)}\` installs them, running: ${planText(plan)}` };
      }
    }
  }
  return { ...described, status: 'ok', hash: await fingerprint(found.inputs, entry) };
}

/**
 * What an install of the tool installs: for a Python tool of a pack that has a
 * requirements.txt, that file (the pack's tools share it and are tested with it; a tool's
 * own list may name the pack itself), else what the tool publishes.
 */
async function installedRequirements(found: FoundTool, published: unknown): Promise<unknown> {
  if (!found.pack?.requirements || extname(found.source) !== '.py') return published;
  try {
    return { tool: 'pip', format: 'requirements.txt', content: await readFile(found.pack.requirements, 'utf8') };
  } catch {
    return published;
  }
}

/**
 * An installed environment in front of what the scan itself runs with: the folders of
 * PYTHONPATH or NODE_PATH that gave a tool its other libraries stay, after the new one.
 */
function withEnvironment(added: Record<string, string>, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return Object.fromEntries(Object.entries(added).map(([name, dir]) => [name, env[name] ? `${dir}${delimiter}${env[name]}` : dir]));
}

/** A path as one shell word, for a command shown to be copied. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

function prefixOf(source: string, options: ScanOptions): string {
  const under = (options.prefixes ?? []).filter(({ dir }) => !relative(dir, source).startsWith('..'));
  return under.sort((a, b) => b.dir.length - a.dir.length)[0]?.prefix ?? '';
}

/** A schema that says nothing about the data: what a launcher publishes when the tool cannot load. */
function isEmptySchema(schema: Record<string, unknown>): boolean {
  const saysNothing = new Set(['type', '$schema', 'title', 'description', 'additionalProperties']);
  return Object.keys(schema).every((key) => saysNothing.has(key)) && schema.additionalProperties !== false;
}

/** Every tool whose name another usable tool also has fails, naming the other's file. */
function markDuplicates(tools: ScannedTool[]): ScannedTool[] {
  const byName = new Map<string, ScannedTool[]>();
  for (const tool of tools) if (tool.name !== null && tool.status !== 'failed') byName.set(tool.name, [...(byName.get(tool.name) ?? []), tool]);
  return tools.map((tool) => {
    const same = tool.name === null || tool.status === 'failed' ? [] : byName.get(tool.name)!.filter((other) => other !== tool);
    if (same.length === 0) return tool;
    return {
      ...tool,
      status: 'failed',
      reason: `the name "${tool.name}" is also published by ${same.map((other) => other.source).join(' and ')}; give all but one another "name" in the catalog (--write keeps it)`,
    };
  });
}

/** The interpreter is resolved once, when an install is first planned (outside.ts). */
function installContext(options: ScanOptions): InstallContext {
  let python: Promise<Interpreter> | undefined;
  return {
    envsDir: options.envsDir ?? defaultEnvsDir(),
    python: () => (python ??= resolvePython(options.python ?? 'python3')),
    allowInstallScripts: options.allowInstallScripts ?? false,
  };
}
