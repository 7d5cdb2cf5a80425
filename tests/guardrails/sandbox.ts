/** A throw-away directory tree for guardrails tests: a workspace, a runs area, an outside area and a log directory. */
import { mkdirSync, mkdtempSync, realpathSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Sandbox {
  /** The real (symlink-free) temporary directory holding everything. */
  base: string;
  workspace: string;
  runs: string;
  outside: string;
  logs: string;
}

export function sandbox(): Sandbox {
  // realpath: a temporary directory reached through a symlink (macOS /var) would be an invalid root.
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-guardrails-')));
  const tree = { base, workspace: join(base, 'workspace'), runs: join(base, 'runs'), outside: join(base, 'outside'), logs: join(base, 'logs') };
  for (const dir of [tree.workspace, tree.runs, tree.outside, tree.logs]) mkdirSync(dir);
  return tree;
}

/** The incident lines of a stderr text or log file (every line but a trailing `{"error": ...}`). */
export function incidentsIn(text: string): Record<string, any>[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line))
    .filter((value) => value.event === 'workspace_incident');
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** What the reference's Python isoformat() of an aware UTC time looks like, and what Python reads back. */
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3}|\.\d{6})?\+00:00$/;

/** A mount point inside a real directory, for mount-boundary tests: /dev/shm below /dev, where it is mounted on its own. */
export function separateMount(): { root: string; virtual: string } | null {
  try {
    return statSync('/dev').dev !== statSync('/dev/shm').dev ? { root: '/dev', virtual: '/shm' } : null;
  } catch {
    return null;
  }
}
