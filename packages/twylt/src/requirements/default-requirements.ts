/**
 * The `requirements` a tool publishes when its author declares none: the packages its code
 * imports. Shared by the launcher (static answers), the run loop (the tool's own answer)
 * and the build (an executable's answer), so all agree: a folder of its own below the three
 * (ADR 0041). No package dependencies, synchronous, and run only when a describe mode needs
 * it. ADR 0037.
 */
import { readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Fault, TwyltError } from '../protocol/errors.js';
import { isRecord } from '../protocol/record.js';
import type { Requirements } from '../protocol/spec.js';
import { importsOf } from './imports.js';

/**
 * `{tool: "npm", format: "package.json", content}` where content is
 * `JSON.stringify({dependencies}, null, 2)` of the packages the tool's code imports: the
 * bare specifiers of the tool file and of the files it imports by path (never into
 * node_modules), Node's own modules left out, each with the version installed for the file
 * that imports it (`^VERSION`), else the range the nearest package.json declares, else `*`.
 * `{}` when the tool file is unknown or does not exist (no code to read). A built executable
 * answers what the build derived (see `builtRequirementsSource`). Only describe requests
 * need this, so a file that exists and cannot be read, or a nearest package.json that is
 * malformed, is a describe error (exit 4) naming the file, for the launcher and the run
 * loop alike.
 */
export function defaultRequirements(toolFile: string | undefined): Requirements {
  const built = (globalThis as Slots)[BUILT_REQUIREMENTS];
  if (built) return built;
  const dependencies = toolFile === undefined ? {} : importedDependencies(resolve(toolFile));
  return { tool: 'npm', format: 'package.json', content: JSON.stringify({ dependencies }, null, 2) };
}

/** A bound on the tool's own files read, so that a describe always ends. */
const MAX_FILES = 2000;

function importedDependencies(entry: string): Record<string, string> {
  // Each package, with the folder of the first file that imports it (its version resolves from there).
  const packages = new Map<string, string>();
  const queue = [entry];
  const seen = new Set(queue);
  while (queue.length > 0) {
    const file = queue.shift()!;
    const source = readIfExists(file);
    if (source === undefined) continue;
    for (const { specifier, typeOnly } of importsOf(source)) {
      if (typeOnly) continue;
      const local = localFile(specifier, dirname(file));
      if (local === undefined) {
        const name = packageName(specifier);
        if (name !== undefined && !packages.has(name)) packages.set(name, dirname(file));
      } else if (local !== null && !seen.has(local) && seen.size < MAX_FILES) {
        seen.add(local);
        queue.push(local);
      }
    }
  }
  const declared = nearestDeclared(dirname(entry));
  const out: Record<string, string> = {};
  for (const name of [...packages.keys()].sort()) {
    const installed = installedVersion(name, packages.get(name)!);
    const range = declared[name];
    out[name] = installed ? `^${installed}` : range === undefined || LOCAL_SOURCE.test(range) ? '*' : range;
  }
  return out;
}

const CODE = /\.(?:[cm]?[jt]s|[jt]sx)$/;
/** TypeScript sources are imported by the name of the JavaScript they compile to. */
const COMPILED_FROM: Record<string, string[]> = { '.js': ['.ts', '.tsx'], '.jsx': ['.tsx'], '.mjs': ['.mts'], '.cjs': ['.cts'] };
const EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];

/**
 * The file a relative, absolute or file: specifier names, when it is the tool's own code;
 * null for one not followed (not found, not code, inside node_modules); undefined when the
 * specifier is not a path.
 */
function localFile(specifier: string, fromDir: string): string | null | undefined {
  let path: string;
  if (specifier.startsWith('file:')) {
    try {
      path = fileURLToPath(specifier);
    } catch {
      return null;
    }
  } else if (/^\.{1,2}(\/|$)|^\//.test(specifier)) path = resolve(fromDir, specifier);
  else return undefined;
  const extension = /\.[^./\\]+$/.exec(path)?.[0] ?? '';
  const candidates = CODE.test(path)
    ? [path, ...(COMPILED_FROM[extension] ?? []).map((ts) => path.slice(0, -extension.length) + ts)]
    : [...EXTENSIONS.map((ext) => path + ext), ...EXTENSIONS.map((ext) => join(path, `index${ext}`))];
  const found = candidates.find(isFile);
  return found === undefined || /[\\/]node_modules[\\/]/.test(found) ? null : found;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

const NODE_OWN = new Set(builtinModules);
const PACKAGE_NAME = /^(?:@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]*$/i;

/**
 * The npm package a bare specifier names (`zod/v4` -> `zod`, `@scope/x/y` -> `@scope/x`);
 * undefined for Node's own modules, `#` imports, URLs and runtime schemes (`node:`, `bun:`,
 * `npm:`), and what is not a package name (a `@/` path alias).
 */
function packageName(specifier: string): string | undefined {
  if (specifier.startsWith('#') || /^[a-z][\w+.-]*:/i.test(specifier)) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  if (!PACKAGE_NAME.test(name) || NODE_OWN.has(name) || NODE_OWN.has(specifier)) return undefined;
  return name;
}

/** Ranges that name a place rather than versions: file:, link:, workspace:, git and tarball URLs, paths. */
const LOCAL_SOURCE = /^(file:|link:|workspace:|portal:|git\+|git:|github:|gitlab:|bitbucket:|https?:|\.{0,2}\/|~\/)/;

/** The version in node_modules/NAME/package.json, looked up from `fromDir` upward as Node resolves it. */
function installedVersion(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
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

/** The ranges the package.json nearest to `startDir` declares, every kind of dependency; {} without one. */
function nearestDeclared(startDir: string): Record<string, string> {
  for (let dir = startDir; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    const text = readIfExists(file);
    if (text !== undefined) return declaredIn(text, file);
    if (dirname(dir) === dir) return {};
  }
}

const KINDS = ['devDependencies', 'peerDependencies', 'optionalDependencies', 'dependencies'] as const;

/** Later kinds win: `dependencies` is what an install of the project gets. */
function declaredIn(text: string, file: string): Record<string, string> {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw invalid('InvalidPackageJson', `${file} is not valid JSON, so the default requirements cannot be derived: ${(error as Error).message}`);
  }
  const ranges: Record<string, string> = {};
  for (const kind of KINDS) {
    const field = isRecord(manifest) ? manifest[kind] : undefined;
    if (field === undefined) continue;
    const valid = isRecord(field) && Object.values(field).every((range) => typeof range === 'string');
    if (!valid) throw invalid('InvalidPackageJson', `"${kind}" in ${file} must map package names to version strings`);
    Object.assign(ranges, field);
  }
  return ranges;
}

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw invalid('RequirementsUnreadable', `Cannot read ${file} for the default requirements: ${code ?? 'unknown error'}`);
  }
}

function invalid(name: string, message: string): TwyltError {
  return new TwyltError('describe', { cause: new Fault(name, message) });
}

const ENTRY_FILE = Symbol.for('twylt.toolEntryFile');
const BUILT_REQUIREMENTS = Symbol.for('twylt.builtRequirements');
type Slots = { [ENTRY_FILE]?: string; [BUILT_REQUIREMENTS]?: Requirements };

/** Called by the launcher before it imports the tool: the tool's file is not process.argv[1] then. */
export function markToolEntryFile(file: string): void {
  (globalThis as Slots)[ENTRY_FILE] = file;
}

/** The file of the tool being run: the one a launcher marked, else the process's main script. */
export function toolEntryFile(): string | undefined {
  return (globalThis as Slots)[ENTRY_FILE] ?? process.argv[1];
}

/**
 * Code for the top of a bundle made by `twylt build`: the tool file the describe run reads
 * (a bundle's own imports are no longer the tool's), or the requirements a compiled
 * executable answers (its code is inside the executable, where no file can be read).
 */
export function builtRequirementsSource(slot: { entryFile: string } | { requirements: Requirements }): string {
  const [key, value] = 'entryFile' in slot ? ['twylt.toolEntryFile', slot.entryFile] : ['twylt.builtRequirements', slot.requirements];
  return `globalThis[Symbol.for(${JSON.stringify(key)})] = ${JSON.stringify(value)};`;
}
