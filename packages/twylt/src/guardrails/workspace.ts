/**
 * The workspace policy: checked roots and incident sinks, and the two faces of the
 * business-code API (`Workspace`): the policy itself when guardrails are on, and plain
 * path handling when they are off.
 */
import { closeSync, lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Fault, TwyltError } from '../protocol/errors.js';
import type { DenyCode } from './codes.js';
import { openLog, recordIncident, type IncidentSink } from './incident.js';
import { isWithin, pathSyntaxProblem, virtualParts, virtualPath } from './paths.js';
import type { RunState } from './state.js';

export interface InspectOptions {
  /** Accept a symbolic link as the last component (to remove the link itself, say). */
  allowLeafLink?: boolean;
}

/** What business code gets from `workspace()`. Every method throws a guardrails TwyltError (exit 6) on denial. */
export interface Workspace {
  /** False when guardrails are off: nothing is denied then. */
  readonly enabled: boolean;
  /** The host directory behind virtual `/`, or null. Keep it out of outputs and messages. */
  readonly root: string | null;
  /** A tool's path (`/x` and `x` both inside the root) as a checked host path. */
  resolve(path: string, base?: string): string;
  /** Checks a host path without following links; returns the path to use. */
  inspect(path: string, options?: InspectOptions): string;
  /** Inspects the path and, for a directory, every entry below it: call before a recursive change. */
  inspectTree(path: string): void;
  /** Denies when the path is the root itself: call before deleting, moving or rewriting a path. */
  protectRoot(path: string): void;
  /** The tool's view of a host path (`/` is the root), safe to put in outputs. */
  virtual(path: string): string;
}

/** Which error a denial becomes: `guardrailsTransport` for the file transport, else `guardrails`. */
export type DenyKind = 'guardrails' | 'guardrailsTransport';

/** Records an incident, then throws the protocol error that ends the run with exit 6. */
export class Denier {
  constructor(
    private readonly sink: IncidentSink,
    private readonly kind: DenyKind,
  ) {}

  deny(code: DenyCode, requestedPath?: string): never {
    const incident = recordIncident(this.sink, code, requestedPath);
    throw new TwyltError(this.kind, {
      code: incident.code,
      incidentId: incident.incident_id,
      originalCode: incident.original_code,
      cause: new Fault('WorkspaceDenied', `${incident.code}: denied by the workspace policy (incident ${incident.incident_id})`),
    });
  }
}

/**
 * The policy's set-up, which may itself deny: checks the root (when given) and the
 * incident log, and returns the checked root with a Denier writing to that log. Denials
 * found on the way go to stderr: the log is not trusted yet.
 */
export function setUpPolicy(state: RunState, kind: DenyKind, rootValue: string | null): { denier: Denier; root: string | null } {
  const early = new Denier({ tool: state.tool, stderr: state.stderr, log: null }, kind);
  const root = rootValue === null ? null : checkedRoot(early, rootValue);
  const log = state.config.incidentLog === '' ? null : checkedLog(early, root, state.config.incidentLog);
  return { denier: new Denier({ tool: state.tool, stderr: state.stderr, log }, kind), root };
}

/** The policy over one root (the workspace root, or for the file transport the allowed cwd). */
export function openWorkspace(state: RunState, kind: DenyKind, rootValue: string): PolicyWorkspace {
  const { denier, root } = setUpPolicy(state, kind, rootValue);
  return new PolicyWorkspace(denier, root!);
}

/** An absolute, existing directory that is not `/`, reached through real directories only. */
function checkedRoot(denier: Denier, value: string): string {
  if (value === '' || !isAbsolute(value)) denier.deny('workspace_not_configured');
  const root = resolve(value);
  for (const dir of selfAndAncestors(root)) {
    if (!lstatIfExists(dir, true)?.isDirectory()) denier.deny('invalid_workspace_root');
  }
  if (dirname(root) === root) denier.deny('filesystem_root_forbidden');
  return root;
}

/** An absolute path outside the root, in real directories, that opens as a plain file. */
function checkedLog(denier: Denier, root: string | null, value: string): string {
  if (!isAbsolute(value)) denier.deny('invalid_incident_log');
  const log = resolve(value);
  if (root !== null && isWithin(root, log)) denier.deny('incident_log_inside_workspace');
  for (const dir of selfAndAncestors(dirname(log))) {
    const stats = lstatIfExists(dir, true);
    if (!stats) denier.deny('incident_log_unavailable');
    if (!stats.isDirectory()) denier.deny('invalid_incident_log');
  }
  try {
    closeSync(openLog(log));
  } catch {
    denier.deny('incident_log_unavailable');
  }
  return log;
}

export class PolicyWorkspace implements Workspace {
  readonly enabled = true;

  constructor(
    private readonly denier: Denier,
    readonly root: string,
  ) {}

  resolve(path: string, base?: string): string {
    const problem = pathSyntaxProblem(path);
    // An unusable value (empty, NUL) is not echoed into the incident.
    if (problem === 'invalid_path') this.denier.deny(problem);
    if (problem) this.denier.deny(problem, path);
    const start = path.startsWith('/') || base === undefined ? this.root : resolve(base);
    return this.inspect(join(start, ...virtualParts(path)));
  }

  inspect(path: string, options: InspectOptions = {}): string {
    const target = resolve(path);
    if (!isWithin(this.root, target)) this.denier.deny('path_outside_workspace');
    const device = statSync(this.root).dev;
    const parts = relative(this.root, target).split(sep).filter((part) => part !== '');
    let current = this.root;
    for (const [i, part] of parts.entries()) {
      current = join(current, part);
      const stats = lstatIfExists(current);
      if (!stats) break; // not there (yet): nothing below it can be a link
      if (stats.isSymbolicLink() && options.allowLeafLink && i === parts.length - 1) break;
      this.check(stats, target, device);
    }
    return target;
  }

  inspectTree(path: string): void {
    const top = this.inspect(path);
    if (!lstatIfExists(top)?.isDirectory()) return;
    const device = statSync(this.root).dev;
    const pending = [top];
    for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
      for (const name of readdirSync(dir)) {
        const child = join(dir, name);
        const stats = lstatIfExists(child);
        if (!stats) continue; // gone since the listing
        this.check(stats, child, device);
        if (stats.isDirectory()) pending.push(child);
      }
    }
  }

  protectRoot(path: string): void {
    if (resolve(path) === this.root) this.denier.deny('workspace_root_mutation_forbidden', '/');
  }

  virtual(path: string): string {
    const target = resolve(path);
    if (!isWithin(this.root, target)) this.denier.deny('path_outside_workspace');
    return virtualPath(this.root, target);
  }

  /** One component on the way to `target`, as lstat saw it. */
  private check(stats: Stats, target: string, device: number): void {
    const requested = virtualPath(this.root, target);
    if (stats.isSymbolicLink()) this.denier.deny('symlink_forbidden', requested);
    if (stats.isFile() && stats.nlink > 1) this.denier.deny('hardlink_forbidden', requested);
    if (!stats.isFile() && !stats.isDirectory()) this.denier.deny('special_file_forbidden', requested);
    if (stats.dev !== device) this.denier.deny('mount_boundary_forbidden', requested);
  }
}

/** Guardrails off: paths resolve as a tool without guardrails would, and nothing is denied. */
export class OpenWorkspace implements Workspace {
  readonly enabled = false;
  readonly root: string | null;

  /** A configured root still anchors `/x` and relative paths, as in the reference; without one, the cwd does. */
  constructor(
    rootValue: string,
    private readonly cwd: string,
  ) {
    this.root = rootValue === '' ? null : resolve(cwd, rootValue);
  }

  resolve(path: string, base?: string): string {
    if (this.root !== null && path.startsWith('/')) return join(this.root, path);
    return resolve(this.cwd, base ?? this.root ?? this.cwd, path);
  }

  inspect(path: string): string {
    return path;
  }

  inspectTree(): void {}

  protectRoot(): void {}

  virtual(path: string): string {
    const target = resolve(this.cwd, path);
    return this.root !== null && isWithin(this.root, target) ? virtualPath(this.root, target) : path;
  }
}

/** `/`, `/a`, `/a/b` for `/a/b`. */
function selfAndAncestors(path: string): string[] {
  const chain = [path];
  for (let dir = dirname(path); dir !== chain[0]; dir = dirname(dir)) chain.unshift(dir);
  return chain;
}

/** lstat, or undefined when nothing is there; other failures throw (or count as missing when asked). */
function lstatIfExists(path: string, anyFailure = false): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (anyFailure || code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}
