/** Running guardrails fixture tools as real processes. */
import { existsSync } from 'node:fs';
import { ROOT, run, type Finished } from '../support/process.js';
import { JS_RUNTIME } from '../support/runtimes.js';

/** A compiled guardrails fixture (tests/fixtures/guardrails/<name>.ts, built by `npm run build`). */
function fixture(name: string): string[] {
  const compiled = `${ROOT}build/tests/fixtures/guardrails/${name}.js`;
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run npm run build first`);
  return [...JS_RUNTIME, compiled];
}

export const probe = fixture('workspace-probe');

const VARIABLES = ['TWYLT_GUARDRAILS', 'TWYLT_WORKSPACE_ROOT', 'TWYLT_ALLOWED_CWD', 'TWYLT_DISABLE_NETWORK', 'TWYLT_INCIDENT_LOG'];

/** Exactly the given guardrails variables: any the test runner has are removed. */
export function guardrailsEnv(env: Record<string, string>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const name of VARIABLES) out[name] = env[name];
  return { ...env, ...out };
}

export interface Call {
  env: Record<string, string>;
  cwd?: string;
  /** The CLI payload; omitted for file mode. */
  payload?: Record<string, unknown>;
  args?: string[];
}

export function call(tool: string[], { env, cwd, payload, args = [] }: Call): Promise<Finished> {
  const argv = payload === undefined ? [...tool, ...args] : [...tool, JSON.stringify(payload), ...args];
  return run(argv, { env: guardrailsEnv(env), cwd });
}

/** stderr of a JSON-mode denial: incident lines (if any), then the one error line. */
export function stderrParts(result: Finished): { incidents: Record<string, any>[]; error: Record<string, any> } {
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  const parsed = lines.map((line) => JSON.parse(line));
  const last = parsed.pop();
  if (!last?.error) throw new Error(`no error object last on stderr:\n${result.stderr}`);
  for (const item of parsed) if (item.event !== 'workspace_incident') throw new Error(`unexpected stderr line: ${JSON.stringify(item)}`);
  return { incidents: parsed, error: last.error };
}
