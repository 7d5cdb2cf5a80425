/**
 * The workspace of a scanned tool: a folder of its own where it runs, never its code's
 * folder. A sandbox makes where a tool runs writable; a tool run in its own folder could
 * rewrite its code for every later caller. Each tool file gets `ROOT/<folder>-<hash>`
 * (the hash of its path: the same tool gets the same workspace at every scan, two copies
 * of a pack get two), made when it is first described. ROOT is `--workspaces DIR`, else
 * `$TWYLT_WORKSPACES_DIR`, else `${XDG_STATE_HOME:-~/.local/state}/twylt/workspaces`.
 */
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';

/** The environment variable naming the root of the workspaces. */
export const WORKSPACES_DIR_ENV = 'TWYLT_WORKSPACES_DIR';

/** `$TWYLT_WORKSPACES_DIR`, else `${XDG_STATE_HOME:-~/.local/state}/twylt/workspaces`. */
export function defaultWorkspacesDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env[WORKSPACES_DIR_ENV]) return env[WORKSPACES_DIR_ENV];
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'twylt', 'workspaces');
}

/** The workspace of the tool whose entry file is `source` (absolute), under `root`. */
export function workspaceOf(root: string, source: string): string {
  // The folder's name only as a hint for people; letters a pack chose are kept to a safe few.
  const hint = basename(dirname(source)).replace(/[^\w.-]/g, '_').replace(/^\.+/, '_').slice(0, 40) || 'tool';
  return join(root, `${hint}-${createHash('sha256').update(source).digest('hex').slice(0, 12)}`);
}

/** Make the workspace (and its root, private to the user) if it is not there. */
export async function makeWorkspace(root: string, workspace: string): Promise<void> {
  await mkdir(root, { recursive: true, mode: 0o700 });
  await mkdir(workspace, { recursive: true, mode: 0o700 });
}
