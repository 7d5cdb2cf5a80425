/**
 * What the run loop asks of guardrails. The run loop imports this module only when
 * `guardrailsRequested(env)` is true, so a tool without guardrails never loads it.
 */
import { isAbsolute, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { FILE_INPUT, FILE_OUTPUT } from '../protocol/constants.js';
import { Fault, TwyltError } from '../protocol/errors.js';
import { readConfig, type GuardrailsConfig } from './config.js';
import { redactRoot } from './paths.js';
import { setRunState, type RunState } from './state.js';
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
    redactError: (thrown) => (root === null || root === '/' ? thrown : redactThrown(thrown, root)),
  };
}

function redactThrown(thrown: unknown, root: string, depth = 0): unknown {
  if (typeof thrown === 'string') return redactRoot(thrown, root);
  if (!(thrown instanceof Error) || depth > 8) return thrown;
  const error = thrown as Error & { path?: unknown; dest?: unknown };
  try {
    error.message = redactRoot(error.message, root);
    if (typeof error.stack === 'string') error.stack = redactRoot(error.stack, root);
    if (typeof error.path === 'string') error.path = redactRoot(error.path, root);
    if (typeof error.dest === 'string') error.dest = redactRoot(error.dest, root);
    if (error.cause !== undefined) error.cause = redactThrown(error.cause, root, depth + 1);
  } catch {
    // A frozen or hostile error: report a redacted copy of what can be read instead.
    return new Fault(readSafely(() => String(error.name), 'Error'), redactRoot(readSafely(() => String(error.message), ''), root));
  }
  return error;
}

function readSafely(read: () => string, fallback: string): string {
  try {
    return read();
  } catch {
    return fallback;
  }
}
