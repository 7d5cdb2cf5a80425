/**
 * The `requirements` a tool publishes when its author declares none. Shared by the launcher
 * (static answers) and the run loop (the tool's own answer), so both always agree.
 * No package dependencies, synchronous, and run only when a describe mode needs it.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Fault, TwyltError } from '../protocol/errors.js';
import { isRecord } from '../protocol/record.js';
import type { Requirements } from '../tool/definition.js';

/**
 * `{tool: "npm", format: "package.json", content}` where content is
 * `JSON.stringify({dependencies}, null, 2)` of the `dependencies` of the package.json nearest
 * to the tool file (its own folder, then each parent; the working directory when the file is
 * unknown); `{}` when that file has no such field or when no package.json exists up to the root.
 * A dependency installed from a path, tarball, link or git URL is published as a version range.
 * Only describe requests need it, so a nearest package.json that is unreadable or malformed is
 * a describe error (exit 4) naming the file, for the launcher and the run loop alike.
 */
export function defaultRequirements(toolFile: string | undefined): Requirements {
  const dependencies = nearestDependencies(toolFile === undefined ? process.cwd() : dirname(toolFile));
  return { tool: 'npm', format: 'package.json', content: JSON.stringify({ dependencies }, null, 2) };
}

function nearestDependencies(startDir: string): Record<string, string> {
  for (let dir = startDir; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    const text = readIfExists(file);
    if (text !== undefined) return publishable(dependenciesOf(text, file), dir);
    if (dirname(dir) === dir) return {};
  }
}

/**
 * A dependency installed from somewhere only its author can reach (a path, a tarball, a
 * link, a git URL, a workspace) is published as `^VERSION` of the copy installed for the
 * project, so that the requirements install elsewhere; `*` when no installed copy is found.
 */
function publishable(dependencies: Record<string, string>, projectDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, range] of Object.entries(dependencies)) {
    if (!LOCAL_SOURCE.test(range)) out[name] = range;
    else {
      const version = installedVersion(name, projectDir);
      out[name] = version ? `^${version}` : '*';
    }
  }
  return out;
}

/** Ranges that name a place rather than versions: file:, link:, workspace:, git and tarball URLs, paths. */
const LOCAL_SOURCE = /^(file:|link:|workspace:|portal:|git\+|git:|github:|gitlab:|bitbucket:|https?:|\.{0,2}\/|~\/)/;

/** The version in node_modules/NAME/package.json, looked up from the project's folder upward as Node resolves it. */
function installedVersion(name: string, projectDir: string): string | undefined {
  for (let dir = projectDir; ; dir = dirname(dir)) {
    const text = readIfExists(join(dir, 'node_modules', name, 'package.json'));
    if (text !== undefined) {
      try {
        const version = (JSON.parse(text) as { version?: unknown }).version;
        return typeof version === 'string' && /^\d+\.\d+\.\d+/.test(version) ? version : undefined;
      } catch {
        return undefined;
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw invalid('PackageJsonUnreadable', `Cannot read ${file} for the default requirements: ${code ?? 'unknown error'}`);
  }
}

function dependenciesOf(text: string, file: string): Record<string, string> {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw invalid('InvalidPackageJson', `${file} is not valid JSON, so the default requirements cannot be derived: ${(error as Error).message}`);
  }
  const dependencies = isRecord(manifest) ? manifest.dependencies : undefined;
  if (dependencies === undefined) return {};
  const valid = isRecord(dependencies) && Object.values(dependencies).every((range) => typeof range === 'string');
  if (!valid) throw invalid('InvalidPackageJson', `"dependencies" in ${file} must map package names to version strings`);
  return dependencies as Record<string, string>;
}

function invalid(name: string, message: string): TwyltError {
  return new TwyltError('describe', { cause: new Fault(name, message) });
}

const ENTRY_FILE = Symbol.for('twylt.toolEntryFile');
type Slots = { [ENTRY_FILE]?: string };

/** Called by the launcher before it imports the tool: the tool's file is not process.argv[1] then. */
export function markToolEntryFile(file: string): void {
  (globalThis as Slots)[ENTRY_FILE] = file;
}

/** The file of the tool being run: the one a launcher marked, else the process's main script. */
export function toolEntryFile(): string | undefined {
  return (globalThis as Slots)[ENTRY_FILE] ?? process.argv[1];
}
