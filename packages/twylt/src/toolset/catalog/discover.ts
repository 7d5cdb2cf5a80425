/**
 * Which files of a folder are TWYLT tools, without running any of them. Only entry points
 * are candidates: the tools a pack's manifest.json lists, else per folder a `run.py`
 * launcher beside a `tool.py`, or one file named `tool.py`, `tool.ts`, `tool.mts`,
 * `tool.js` or `tool.mjs` (the first of these), plus files `--glob` names. Hidden folders,
 * node_modules, __pycache__ and test folders are never entered unless a glob names them.
 *
 * A manifest is read in the published form (`{"name", "version", "protocol", "tools":
 * [{"name", "entrypoint", "bootstrap", "description"}]}`) and in the older path forms; a
 * listed tool whose real path leaves the pack (`..`, a symbolic link) is refused.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isRecord } from '../../protocol/record.js';
import { NEVER_WALKED } from '../fingerprint.js';
import { Glob } from './glob.js';
import { PYTHON_LAUNCHER, TOOL_FILES } from './runtime.js';

/** A pack's description of itself; only these fields are read, others are ignored. */
export const MANIFEST = 'manifest.json';
/** Code a pack's tools share: part of each tool's describe-cache inputs. */
export const SHARED = 'shared';
/** A pack's Python requirements: what `--install` installs for its Python tools. */
export const PACK_REQUIREMENTS = 'requirements.txt';
/** The protocol a manifest may name: TWYLT 1, any minor version. */
const PROTOCOL = /^TWYLT 1(\.\d+)*$/;

const TEST_FOLDERS = new Set(['test', 'tests', '__tests__']);

/** An entry point found, or a file that should have been one (`problem`). */
export interface FoundTool {
  /** The entry file, absolute. */
  source: string;
  /** The scanned folder it was found under. */
  root: string;
  category: string;
  /** What the tool's describe depends on: its folder, a pack's manifest and shared code. */
  inputs: string[];
  /** Why this candidate cannot be a tool (a broken manifest, a listed file missing). */
  problem?: string;
  /** The pack it belongs to, when it has a manifest. */
  pack?: PackInfo;
  /** What the manifest says of the tool before it is described. */
  listed?: { name?: string; description?: string };
}

/** A pack, as its manifest names it. */
export interface PackInfo {
  /** Its folder, absolute. */
  root: string;
  name: string;
  version?: string;
  /** Its requirements.txt (absolute) when it has one: the requirements of its Python tools. */
  requirements?: string;
}

export interface DiscoverOptions {
  /** More entry points, as paths relative to the scanned folder. */
  globs?: readonly string[];
  /** Paths (files or folders) relative to the scanned folder never looked at. */
  excludes?: readonly string[];
}

/** The tools under `root`, in path order. */
export async function discoverTools(root: string, options: DiscoverOptions = {}): Promise<FoundTool[]> {
  const walk = new Walk(resolve(root), options);
  await walk.folder(walk.root, undefined);
  return walk.found.map((tool) => ({ ...tool, root: walk.root })).sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
}

class Walk {
  readonly root: string;
  readonly found: Omit<FoundTool, 'root'>[] = [];
  readonly #globs: Glob[];
  readonly #excludes: Glob[];

  constructor(root: string, options: DiscoverOptions) {
    this.root = root;
    this.#globs = (options.globs ?? []).map((text) => new Glob(text));
    this.#excludes = (options.excludes ?? []).map((text) => new Glob(text));
  }

  async folder(dir: string, pack: PackInfo | undefined): Promise<void> {
    let names;
    try {
      // Stryker disable next-line MethodExpression,ArrowFunction,ConditionalExpression,EqualityOperator,UnaryOperator: equivalent, the walk's order shows nowhere: discoverTools sorts what it found by path, and the rows of one path (a manifest's) keep the manifest's order
      names = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    } catch (error) {
      // The scanned folder itself must be readable (the caller says so); below it, one that is not is a row of the report.
      if (dir === this.root) throw error;
      this.found.push({ source: dir, category: pack?.name ?? basename(this.root), inputs: [], problem: `cannot read the folder ${dir}: ${(error as Error).message}` });
      return;
    }
    const files = new Set(names.filter((entry) => entry.isFile()).map((entry) => entry.name));
    if (!pack && files.has(MANIFEST)) {
      const manifest = await this.#manifest(dir);
      if (manifest.listed) return;
      pack = manifest.pack;
    }
    const entry = entryIn(files);
    if (entry && !this.#excluded(join(dir, entry))) this.#add(join(dir, entry), pack);
    for (const name of files) {
      const file = join(dir, name);
      if (name !== entry && this.#globbed(file) && !this.#excluded(file)) this.#add(file, pack);
    }
    for (const sub of names) {
      if (!sub.isDirectory() || !this.#enters(sub.name) || this.#excluded(join(dir, sub.name))) continue;
      await this.folder(join(dir, sub.name), pack);
    }
  }

  /** Read a pack's manifest; with a `tools` list, add those tools (`listed`), else only name the pack. */
  async #manifest(dir: string): Promise<{ pack?: PackInfo; listed: boolean }> {
    const file = join(dir, MANIFEST);
    const row = (problem: string, category: string) => this.found.push({ source: file, category, inputs: [file], problem: `${file}: ${problem}` });
    let data: unknown;
    try {
      // Stryker disable next-line StringLiteral: equivalent, with an empty encoding readFile gives a Buffer, and JSON.parse reads its UTF-8 text all the same
      data = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      this.found.push({ source: file, category: basename(dir), inputs: [file], problem: `${file} is not a readable JSON pack manifest: ${(error as Error).message}` });
      return { listed: true };
    }
    if (!isRecord(data)) {
      row('a pack manifest is a JSON object', basename(dir));
      return { listed: true };
    }
    const pack: PackInfo = { root: dir, name: basename(dir) };
    // A malformed pack field is one row; the pack's tools are still scanned.
    if (typeof data.name === 'string' && data.name !== '') pack.name = data.name;
    else if (data.name !== undefined) row(`"name" must be a non-empty string (the pack's category), got ${shown(data.name)}`, pack.name);
    if (typeof data.version === 'string') pack.version = data.version;
    else if (data.version !== undefined) row(`"version" must be a string, got ${shown(data.version)}`, pack.name);
    if (data.protocol !== undefined && (typeof data.protocol !== 'string' || !PROTOCOL.test(data.protocol))) {
      // Tools of another protocol would answer in a language this scan does not read: none is run.
      row(`"protocol" is ${shown(data.protocol)}: this scan reads packs of "TWYLT 1"; none of its tools was run`, pack.name);
      return { listed: true };
    }
    if (await isFile(join(dir, PACK_REQUIREMENTS))) pack.requirements = join(dir, PACK_REQUIREMENTS);
    const tools = data.tools;
    if (tools === undefined) return { pack, listed: false };
    if (!Array.isArray(tools)) {
      row('"tools" must be a list of {"name", "entrypoint", "bootstrap"?, "description"?} objects (or paths)', pack.name);
      return { listed: true };
    }
    const realRoot = await realpath(dir);
    for (const [at, item] of tools.entries()) {
      const listed = await listedEntry(dir, realRoot, item);
      if ('problem' in listed) {
        const name = isRecord(item) && typeof item.name === 'string' && item.name !== '' ? item.name : undefined;
        const description = isRecord(item) && typeof item.description === 'string' ? item.description : undefined;
        this.found.push({
          source: file,
          category: pack.name,
          inputs: [file],
          problem: `${file}: tools[${at}]${name ? ` (${shown(name)})` : ''}: ${listed.problem}`,
          pack,
          // The row names the tool the entry meant, as far as the manifest says.
          ...(name || description ? { listed: { ...(name ? { name } : {}), ...(description !== undefined ? { description } : {}) } } : {}),
        });
      } else if (!this.#excluded(listed.file)) this.#add(listed.file, pack, listed.listed);
    }
    return { pack, listed: true };
  }

  #add(source: string, pack: PackInfo | undefined, listed?: FoundTool['listed']): void {
    const folder = dirname(source);
    const inputs = [folder];
    if (pack) inputs.push(join(pack.root, MANIFEST), join(pack.root, SHARED));
    if (pack?.requirements) inputs.push(pack.requirements);
    this.found.push({ source, category: this.#category(folder, pack), inputs, ...(pack ? { pack } : {}), ...(listed ? { listed } : {}) });
  }

  /** The pack's name (or the scanned folder's), then the folders down to the tool's own, `tools` left out. */
  #category(toolFolder: string, pack: PackInfo | undefined): string {
    const base = pack ? pack.root : this.root;
    const between = relative(base, dirname(toolFolder)).split(sep).filter((segment) => segment !== '' && segment !== '..' && segment !== 'tools');
    if (pack) return [pack.name, ...between].join('/');
    return between.length > 0 ? between.join('/') : basename(this.root);
  }

  #relative(path: string): string {
    return relative(this.root, path).split(sep).join('/');
  }

  #excluded(path: string): boolean {
    const rel = this.#relative(path);
    return this.#excludes.some((glob) => glob.matches(rel));
  }

  #globbed(file: string): boolean {
    const rel = this.#relative(file);
    return this.#globs.some((glob) => glob.matches(rel));
  }

  #enters(name: string): boolean {
    const hidden = name.startsWith('.') || NEVER_WALKED.has(name) || TEST_FOLDERS.has(name);
    return !hidden || this.#globs.some((glob) => glob.names(name));
  }
}

/** The entry point of one folder: the launcher beside tool.py, else the first tool file. */
function entryIn(files: ReadonlySet<string>): string | undefined {
  if (files.has('tool.py') && files.has(PYTHON_LAUNCHER)) return PYTHON_LAUNCHER;
  return TOOL_FILES.find((name) => files.has(name));
}

type Listed = { file: string; listed?: FoundTool['listed'] } | { problem: string };

/**
 * A manifest's tool: `{"entrypoint", "bootstrap"?, "name"?, "description"?}` (the
 * bootstrap launcher when it exists, else the entry point), or the older forms: a folder
 * (its entry point), a file (its launcher, if one sits beside a tool.py), `{"path",
 * "launcher"?, "entry"?}`. What a field holds is checked; unknown fields are ignored.
 */
async function listedEntry(packRoot: string, realRoot: string, item: unknown): Promise<Listed> {
  if (typeof item === 'string') return pathEntry(packRoot, realRoot, { path: item });
  if (!isRecord(item)) return { problem: `a listed tool must be an object with "entrypoint" (or a path), got ${shown(item)}` };
  for (const field of ['name', 'description', 'entrypoint', 'bootstrap', 'path', 'launcher', 'entry']) {
    if (item[field] !== undefined && typeof item[field] !== 'string') return { problem: `"${field}" must be a string, got ${shown(item[field])}` };
  }
  if (item.name === '') return { problem: '"name" must not be empty' };
  const listed = { ...(item.name ? { name: item.name as string } : {}), ...(item.description !== undefined ? { description: item.description as string } : {}) };
  if (typeof item.entrypoint === 'string') {
    const entry = await inside(packRoot, realRoot, item.entrypoint, 'entrypoint');
    if ('problem' in entry) return entry;
    if (!entry.isFile) return { problem: `"entrypoint" must be a file, "${item.entrypoint}" is a folder` };
    if (typeof item.bootstrap === 'string') {
      const launcher = await inside(packRoot, realRoot, item.bootstrap, 'bootstrap');
      // A bootstrap named but not shipped: the entry point itself is run.
      if (!('problem' in launcher) && launcher.isFile) return { file: launcher.path, listed };
      if ('problem' in launcher && !launcher.missing) return launcher;
    }
    return { file: entry.path, listed };
  }
  if (typeof item.path !== 'string') return { problem: 'a listed tool needs "entrypoint" (or "path")' };
  const found = await pathEntry(packRoot, realRoot, item as { path: string; launcher?: string; entry?: string });
  return 'problem' in found ? found : { ...found, listed };
}

/** The older forms: a folder, a file, or a folder with its launcher and entry named. */
async function pathEntry(packRoot: string, realRoot: string, spec: { path: string; launcher?: string; entry?: string }): Promise<Listed> {
  const at = await inside(packRoot, realRoot, spec.path, 'path');
  if ('problem' in at) return at;
  const folder = at.isFile ? dirname(at.path) : at.path;
  const files = new Set((await readdir(folder, { withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => entry.name));
  for (const named of [spec.launcher, spec.entry]) {
    if (typeof named === 'string' && files.has(named)) return { file: join(folder, named) };
  }
  if (at.isFile) return { file: basename(at.path) === 'tool.py' && files.has(PYTHON_LAUNCHER) ? join(folder, PYTHON_LAUNCHER) : at.path };
  const entry = entryIn(files);
  return entry ? { file: join(folder, entry) } : { problem: `"${spec.path}" has no ${PYTHON_LAUNCHER} or ${TOOL_FILES.join(', ')}` };
}

/**
 * A path of the manifest, if it exists inside the pack: both as written and once every
 * symbolic link is followed (a link to a folder elsewhere would run code the pack does not hold).
 */
async function inside(packRoot: string, realRoot: string, path: string, field: string): Promise<{ path: string; isFile: boolean } | { problem: string; missing?: boolean }> {
  const absolute = resolve(packRoot, path);
  if (!within(packRoot, absolute)) return { problem: `"${field}" "${path}" is outside the pack` };
  let real: string;
  let isFile: boolean;
  try {
    real = await realpath(absolute);
    isFile = (await stat(real)).isFile();
  } catch {
    return { problem: `the listed tool's ${field} "${path}" does not exist`, missing: true };
  }
  if (!within(realRoot, real)) return { problem: `"${field}" "${path}" leads outside the pack (to ${real})` };
  return { path: absolute, isFile };
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** A manifest value in a message: JSON, at most 60 characters. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
