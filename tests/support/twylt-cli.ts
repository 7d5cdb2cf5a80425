/** Run the built `twylt` command (packages/twylt/dist/cli/main.js) as a real process, on the runtime under test. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ConformanceReport } from '../../packages/twylt/src/conformance/index.js';
import { JS_RUNTIME, TS_RUNTIME } from './runtimes.js';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const twyltBin = fileURLToPath(new URL('../../packages/twylt/dist/cli/main.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `command` runs twylt instead of the checkout's (a copy run as another user: tests/support/unprivileged.ts). */
export function runTwylt(args: string[], options: { stdin?: string; env?: Record<string, string>; cwd?: string; command?: readonly string[] } = {}): Promise<CliRun> {
  if (!options.command && !existsSync(twyltBin)) throw new Error(`${twyltBin} is missing: run "npm run build -w twylt" first`);
  const command = options.command ?? [...JS_RUNTIME, twyltBin];
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, [...command.slice(1), ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { ...process.env, NO_COLOR: '', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

/** How the repo's TypeScript examples run without a build step: tsx on Node 20, natively elsewhere. */
export const tsRuntime = TS_RUNTIME;

/** `twylt check --json [options] -- <command>`: the parsed report, or an error saying what was printed instead. */
export async function checkReport(
  command: string[],
  options: string[] = [],
  run: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number | null; report: ConformanceReport; stderr: string }> {
  const result = await runTwylt(['check', '--json', ...options, '--', ...command], run);
  try {
    return { code: result.code, report: JSON.parse(result.stdout), stderr: result.stderr };
  } catch {
    throw new Error(`twylt check printed no JSON report (exit ${result.code}): ${result.stderr || result.stdout}`);
  }
}
