/**
 * The file-transport policy: the working directory must lie inside the workspace root or
 * the allowed cwd, and input.json / output.json, directly in it, must be plain files.
 */
import { join, resolve } from 'node:path';
import { Fault, TwyltError } from '../protocol/errors.js';
import { isWithin } from './paths.js';
import type { RunState } from './state.js';
import { openWorkspace, setUpPolicy } from './workspace.js';

/** Throws a `guardrailsTransport` TwyltError (exit 6) unless `name` in the cwd may be used. */
export function checkTransportFile(state: RunState, name: string): void {
  try {
    check(state, name);
  } catch (error) {
    if (error instanceof TwyltError) throw error;
    // The file system refused an lstat (EACCES, say): fail closed, naming no host path.
    const code = (error as NodeJS.ErrnoException)?.code ?? 'an unknown error';
    throw new TwyltError('guardrailsTransport', { cause: new Fault('TransportCheckFailed', `Cannot inspect the working directory or ${name}: ${code}`) });
  }
}

function check(state: RunState, name: string): void {
  const { workspaceRoot, allowedCwd } = state.config;
  const cwd = resolve(state.cwd);
  for (const rootValue of [workspaceRoot, allowedCwd]) {
    if (rootValue === '') continue;
    const policy = openWorkspace(state, 'guardrailsTransport', rootValue);
    if (!isWithin(policy.root, cwd)) continue;
    // Only the cwd itself is granted, never a path elsewhere below the root.
    policy.inspect(cwd);
    policy.inspect(join(cwd, name));
    return;
  }
  setUpPolicy(state, 'guardrailsTransport', workspaceRoot || null).denier.deny('transport_cwd_or_path_outside_allowed_roots');
}
