/**
 * The describe cache's key: a hash of what a tool's describe depends on. A tool's answer
 * changes when its files change (its folder, a pack's manifest and shared code) or when it
 * runs differently (command, environment). Sizes and modification times stand for the
 * files' contents: hashing them costs a `stat` per file, and any edit moves the mtime.
 */
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ToolEntry } from './entry.js';

/** Folders whose files never make a tool's answer: caches, dependencies, version control. */
export const NEVER_WALKED = new Set(['node_modules', '__pycache__']);

/** Past this many files a folder is not worth fingerprinting: the tool is described each start. */
const MAX_FILES = 5000;

/** Hash of `inputs` (files or folders, walked without hidden entries) and of how the entry runs; undefined when too large or unreadable. */
export async function fingerprint(inputs: readonly string[], entry: Pick<ToolEntry, 'command' | 'env'>): Promise<string | undefined> {
  const hash = createHash('sha256').update(JSON.stringify([entry.command, entry.env ?? {}]));
  const budget = { files: MAX_FILES };
  try {
    for (const input of inputs) {
      if (!(await addPath(hash, input, budget))) return undefined;
    }
  } catch {
    return undefined;
  }
  return hash.digest('hex');
}

async function addPath(hash: ReturnType<typeof createHash>, path: string, budget: { files: number }): Promise<boolean> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    hash.update(`\0missing ${path}`);
    return true;
  }
  if (!info.isDirectory()) {
    if (--budget.files < 0) return false;
    hash.update(`\0${path} ${info.size} ${info.mtimeMs}`);
    return true;
  }
  const names = (await readdir(path)).filter((name) => !name.startsWith('.') && !NEVER_WALKED.has(name)).sort();
  for (const name of names) {
    if (!(await addPath(hash, join(path, name), budget))) return false;
  }
  return true;
}
