/**
 * What the run loop asks of guardrails. The run loop imports this module only when
 * `guardrailsRequested(env)` is true, so a tool without guardrails never loads it.
 */
import { isAbsolute, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { FILE_INPUT, FILE_OUTPUT } from '../protocol/constants.js';
import { TwyltError } from '../protocol/errors.js';
import { readConfig, type GuardrailsConfig } from './config.js';
import { redactError } from './redact.js';
import { clearRunState, setRunState, type RunState } from './state.js';
import { checkTransportFile } from './transport.js';

export interface RunContext {
  env: NodeJS.ProcessEnv;
  toolName: string;
  cwd: string;
  stderr: Writable;
  /**
   * Where the input comes from. A configuration error is reported at stage `transport`
   * in file mode and at stage `guardrails` otherwise, as the reference does. Default: not file mode.
   */
  transport?: 'cli' | 'stdin' | 'file';
}

/** Transport checks for file mode; each throws a TwyltError (kind guardrailsTransport) on denial. */
export interface RunGuardrails {
  /** Checks input.json and output.json (a denial must leave the old output.json alone). */
  beforeRemoveOutput(): Promise<void>;
  beforeReadInput(): Promise<void>;
  beforeWriteOutput(): Promise<void>;
  /**
   * Call on anything biz threw that is not a guardrails TwyltError, and report what it
   * returns: the same error with the host's workspace root replaced by `/` in its message,
   * stack and path fields (a string is returned redacted; anything else as it is).
   */
  redactError(thrown: unknown): unknown;
}

/**
 * Reads and checks the configuration (throwing a guardrails TwyltError, exit 6, when it is
 * invalid), makes the business-code API (`twylt/guardrails`) live for this run, and returns
 * the transport checks, or null when guardrails are off.
 */
export async function startGuardrails(ctx: RunContext): Promise<RunGuardrails | null> {
  clearRunState();
  let config: GuardrailsConfig;
  try {
    config = readConfig(ctx.env);
  } catch (error) {
    throw new TwyltError(ctx.transport === 'file' ? 'guardrailsTransport' : 'guardrails', { cause: error });
  }
  const state: RunState = { config, tool: ctx.toolName, cwd: ctx.cwd, stderr: ctx.stderr };
  setRunState(state);
  if (!config.enabled) return null;

  const root = isAbsolute(config.workspaceRoot) ? resolve(config.workspaceRoot) : null;
  return {
    beforeRemoveOutput: async () => {
      checkTransportFile(state, FILE_INPUT);
      checkTransportFile(state, FILE_OUTPUT);
    },
    beforeReadInput: async () => checkTransportFile(state, FILE_INPUT),
    beforeWriteOutput: async () => checkTransportFile(state, FILE_OUTPUT),
    redactError: (thrown) => (root === null ? thrown : redactError(thrown, root)),
  };
}
