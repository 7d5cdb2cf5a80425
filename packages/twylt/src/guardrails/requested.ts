/** Cheap gate the run loop uses before loading any guardrails code. */
export function guardrailsRequested(env: NodeJS.ProcessEnv): boolean {
  return env.TWYLT_GUARDRAILS !== undefined;
}
