/**
 * Which files of a folder are TWYLT tools, without running any of them. Only entry points
 * are candidates: the tools a pack's manifest.json lists, else per folder a `run.py`
 * launcher beside a `tool.py`, or one file named `tool.py`, `tool.ts`, `tool.mts`,
 * `tool.js` or `tool.mjs` (the first of these), plus files `--glob` names. Hidden folders,
 * node_modules, __pycache__ and test folders are never entered unless a glob names them.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { isRecord } from '../../protocol/record.js';
import { NEVER_WALKED } from './fingerprint.js';
import { Glob } from './glob.js';
import { PYTHON_LAUNCHER, TOOL_FILES } from './runtime.js';

/** A pack's description of itself; only these fields are read, others are ignored. */
export const MANIFEST = 'manifest.json';
/** Code a pack's tools share: part of each tool's describe-cache inputs. */
export const SHARED = 'shared';

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

interface Pack {
  root: string;
  name: string;
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

  async folder(dir: string, pack: Pack | undefined): Promise<void> {
    let names;
    try {
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
  async #manifest(dir: string): Promise<{ pack?: Pack; listed: boolean }> {
    const file = join(dir, MANIFEST);
    let data: unknown;
    try {
      data = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      this.found.push({ source: file, category: basename(dir), inputs: [file], problem: `${file} is not a readable JSON pack manifest: ${(error as Error).message}` });
      return { listed: true };
    }
    const pack: Pack = { root: dir, name: isRecord(data) && typeof data.name === 'string' && data.name !== '' ? data.name : basename(dir) };
    const tools = isRecord(data) ? data.tools : undefined;
    if (tools === undefined) return { pack, listed: false };
    if (!Array.isArray(tools)) {
      this.found.push({ source: file, category: pack.name, inputs: [file], problem: `"tools" in ${file} must be a list of paths or {"path", "launcher"?, "entry"?} objects` });
      return { listed: true };
    }
    for (const item of tools) {
      const listed = await listedEntry(dir, item);
      if ('problem' in listed) this.found.push({ source: file, category: pack.name, inputs: [file], problem: `${file}: ${listed.problem}` });
      else if (!this.#excluded(listed.file)) this.#add(listed.file, pack);
    }
    return { pack, listed: true };
  }

  #add(source: string, pack: Pack | undefined): void {
    const folder = dirname(source);
    const inputs = [folder];
    if (pack) inputs.push(join(pack.root, MANIFEST), join(pack.root, SHARED));
    this.found.push({ source, category: this.#category(folder, pack), inputs });
  }

  /** The pack's name (or the scanned folder's), then the folders down to the tool's own, `tools` left out. */
  #category(toolFolder: string, pack: Pack | undefined): string {
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

/** A manifest's tool: a folder (its entry point), a file (its launcher, if one sits beside a tool.py), or `{path, launcher?, entry?}`. */
async function listedEntry(packRoot: string, item: unknown): Promise<{ file: string } | { problem: string }> {
  const spec = typeof item === 'string' ? { path: item } : isRecord(item) && typeof item.path === 'string' ? item : undefined;
  if (!spec) return { problem: `a listed tool must be a path or an object with "path", got ${JSON.stringify(item)}` };
  const path = resolve(packRoot, spec.path as string);
  if (relative(packRoot, path).startsWith('..')) return { problem: `"${spec.path}" is outside the pack` };
  let isFolder: boolean;
  try {
    isFolder = (await stat(path)).isDirectory();
  } catch {
    return { problem: `the listed tool "${spec.path}" does not exist` };
  }
  const folder = isFolder ? path : dirname(path);
  const files = new Set((await readdir(folder, { withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => entry.name));
  for (const named of [spec.launcher, spec.entry]) {
    if (typeof named === 'string' && files.has(named)) return { file: join(folder, named) };
  }
  if (!isFolder) return { file: basename(path) === 'tool.py' && files.has(PYTHON_LAUNCHER) ? join(folder, PYTHON_LAUNCHER) : path };
  const entry = entryIn(files);
  return entry ? { file: join(folder, entry) } : { problem: `"${spec.path}" has no ${PYTHON_LAUNCHER} or ${TOOL_FILES.join(', ')}` };
}
