/** The guardrails configuration, read from the (trusted) environment of the process. */
import { isAbsolute } from 'node:path';
import { Fault } from '../protocol/errors.js';
import { GUARDRAILS_ENV } from './codes.js';

export interface GuardrailsConfig {
  enabled: boolean;
  /** Raw values; '' when unset. Paths are checked when the policy first needs them. */
  workspaceRoot: string;
  allowedCwd: string;
  incidentLog: string;
  disableNetwork: boolean;
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

/** The cause of a configuration error; its name is what `exception.type` shows. */
function configError(message: string): Fault {
  return new Fault('GuardrailsConfigError', message);
}

/**
 * Throws a GuardrailsConfigError Fault for a value the policy cannot use. With guardrails
 * off nothing but TWYLT_GUARDRAILS itself is looked at: off means no guardrails at all.
 */
export function readConfig(env: NodeJS.ProcessEnv): GuardrailsConfig {
  const enabled = readBoolean(env, GUARDRAILS_ENV.enabled);
  const workspaceRoot = env[GUARDRAILS_ENV.workspaceRoot] ?? '';
  if (!enabled) return { enabled, workspaceRoot, allowedCwd: '', incidentLog: '', disableNetwork: false };

  const allowedCwd = env[GUARDRAILS_ENV.allowedCwd] ?? '';
  if (allowedCwd !== '' && !isAbsolute(allowedCwd)) {
    throw configError(`${GUARDRAILS_ENV.allowedCwd} must be an absolute path`);
  }
  return {
    enabled,
    workspaceRoot,
    allowedCwd,
    incidentLog: env[GUARDRAILS_ENV.incidentLog] ?? '',
    disableNetwork: readBoolean(env, GUARDRAILS_ENV.disableNetwork),
  };
}

/** Unset means false; 1/0, true/false, yes/no, on/off in any case (surrounding blanks ignored); anything else, '' included, is an error. */
function readBoolean(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined) return false;
  const value = raw.trim().toLowerCase();
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  throw configError(`${name} must be one of 1/0, true/false, yes/no, on/off; got ${JSON.stringify(raw)}`);
}
