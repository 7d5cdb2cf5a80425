/**
 * `twylt/guardrails`: the workspace API for business code (docs/TWYLT.md section 7).
 *
 *     const ws = workspace();
 *     const dir = ws.resolve(input.path);      // '/x' and 'x' are inside the workspace
 *     for (const name of await readdir(dir)) ws.inspect(join(dir, name));
 *     checkNetwork();                           // before any network use
 *
 * Cooperative, not a sandbox: it checks what the tool asks it to check. With guardrails
 * off (TWYLT_GUARDRAILS unset or false) nothing is denied and paths resolve as usual.
 */
import { TwyltError } from '../protocol/errors.js';
import { readConfig } from './config.js';
import { getRunState, type RunState } from './state.js';
import { OpenWorkspace, openWorkspace, setUpPolicy, type Workspace } from './workspace.js';

export { DENY_CODES, GUARDRAILS_ENV, type DenyCode } from './codes.js';
export type { Incident } from './incident.js';
export type { InspectOptions, Workspace } from './workspace.js';

/**
 * The workspace of this run. With guardrails on, it needs TWYLT_WORKSPACE_ROOT and denies
 * (exit 6) when the configuration is unusable; with them off it never denies.
 */
export function workspace(): Workspace {
  const state = currentRun();
  if (!state.config.enabled) return new OpenWorkspace(state.config.workspaceRoot, state.cwd);
  return openWorkspace(state, 'guardrails', state.config.workspaceRoot);
}

/** Denies (exit 6, code network_disabled) when guardrails are on and TWYLT_DISABLE_NETWORK is true. */
export function checkNetwork(): void {
  const state = currentRun();
  if (!state.config.enabled || !state.config.disableNetwork) return;
  setUpPolicy(state, 'guardrails', state.config.workspaceRoot || null).denier.deny('network_disabled');
}

/** A denial (or a guardrails configuration error): rethrow it, so that the run ends with exit 6. */
export function isGuardrailsError(error: unknown): error is TwyltError {
  return error instanceof TwyltError && (error.kind === 'guardrails' || error.kind === 'guardrailsTransport');
}

/** The run loop's guardrails; outside a run (biz called directly), the process's environment. */
function currentRun(): RunState {
  const state = getRunState();
  if (state) return state;
  try {
    return { config: readConfig(process.env), tool: 'unknown', cwd: process.cwd(), stderr: process.stderr };
  } catch (error) {
    throw new TwyltError('guardrails', { cause: error });
  }
}
