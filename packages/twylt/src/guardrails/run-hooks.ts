/**
 * What the run loop asks of guardrails. The run loop imports this module only when
 * `guardrailsRequested(env)` is true, so a tool without guardrails never loads it.
 *
 * STUB: the guardrails helper replaces the bodies; the signatures are the contract.
 */
import type { Writable } from 'node:stream';

export interface RunContext {
  env: NodeJS.ProcessEnv;
  toolName: string;
  cwd: string;
  stderr: Writable;
}

/** Transport checks for file mode; each throws a TwyltError (kind guardrailsTransport) on denial. */
export interface RunGuardrails {
  beforeRemoveOutput(): Promise<void>;
  beforeReadInput(): Promise<void>;
  beforeWriteOutput(): Promise<void>;
}

/**
 * Reads and checks the configuration (throwing a guardrails TwyltError, exit 6, when it is
 * invalid), makes the business-code API (`twylt/guardrails`) live for this run, and returns
 * the transport checks, or null when guardrails are off.
 */
export async function startGuardrails(_ctx: RunContext): Promise<RunGuardrails | null> {
  return null;
}
