/**
 * A scan's usable tools as tool-set entries, and the catalog file: the config that
 * `--config` takes, each entry with its category, entry file, environment and the describe
 * it answered (so a consumer serves it without starting it while its files are unchanged).
 * Paths in the file are relative to the file's folder, as config files read them.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { parseConfig } from '../config.js';
import type { ToolEntry } from '../entry.js';
import type { ScannedTool } from './scan.js';

/** The entries of the `ok` tools, paths absolute. */
export function scannedEntries(tools: readonly ScannedTool[]): ToolEntry[] {
  return tools.filter((tool) => tool.status === 'ok').map((tool) => toEntry(tool, (path) => path));
}

function toEntry(tool: ScannedTool, path: (absolute: string) => string): ToolEntry {
  const entry: ToolEntry = { command: tool.command, cwd: path(tool.cwd) };
  // A name is written only when it is not the published one: the tool's own renames still show.
  if (tool.name !== null && tool.name !== tool.spec?.name) entry.name = tool.name;
  if (tool.env) entry.env = tool.env;
  entry.category = tool.category;
  entry.source = path(tool.source);
  if (tool.spec && tool.hash) entry.describeCache = { inputs: tool.inputs.map(path), hash: tool.hash, spec: tool.spec };
  return entry;
}

/** The catalog file's content for `file`: the `ok` tools. */
export function catalogText(tools: readonly ScannedTool[], file: string): string {
  const base = dirname(resolve(file));
  // Inside the catalog's folder a path is written relative to it (the folder can move), elsewhere absolute.
  const path = (absolute: string) => {
    const inside = relative(base, absolute);
    return inside.startsWith('..') || isAbsolute(inside) ? absolute : inside.split(sep).join('/') || '.';
  };
  const entries = tools.filter((tool) => tool.status === 'ok').map((tool) => toEntry(tool, path));
  return `${JSON.stringify({ tools: entries }, null, 2)}\n`;
}

/**
 * Write the catalog whole or not at all: a consumer never reads half a file. Its search index
 * goes beside it (catalog.search-index.json), so a bridge in search mode starts without
 * building it; a bridge whose tools differ from the file's builds its own.
 */
export async function writeCatalog(tools: readonly ScannedTool[], file: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, catalogText(tools, file));
  await rename(temporary, file);
  // Loaded here only: a scan that writes no catalog loads no search code.
  const { searchableTool, storedIndexFile, writeStoredIndex } = await import('../search/index.js');
  const served = tools.filter((tool) => tool.status === 'ok' && tool.spec);
  await writeStoredIndex(
    storedIndexFile(file),
    served.map((tool) => searchableTool(tool.name ?? tool.spec!.name, tool.spec!, tool.category)),
  );
}

/** The names given by hand in an earlier catalog, by entry file; none when there is no such file. */
export async function namesKept(file: string): Promise<Map<string, string>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return new Map();
  }
  const names = new Map<string, string>();
  for (const entry of parseConfig(text, file)) if (entry.source && entry.name) names.set(entry.source, entry.name);
  return names;
}
