/** Cheap gate the run loop uses before loading any guardrails code. */
import { clearRunState } from './state.js';

export function guardrailsRequested(env: NodeJS.ProcessEnv): boolean {
  return env.TWYLT_GUARDRAILS !== undefined;
}

/**
 * For a run without guardrails: drops what an earlier run in the same process (runWith,
 * tests) left for `twylt/guardrails`, so that its business code sees no stale policy.
 */
export function forgetGuardrails(): void {
  clearRunState();
}
