/** The child processes of `twylt build`: Node's snapshot builder, postject, the built tool's first runs. */
import { spawn } from 'node:child_process';

export interface Quiet {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * A child process of the build whose output is kept, not shown; killed after `timeoutMs`.
 * It runs as a consumer would run the tool by default: none of the caller's switches.
 */
export function runQuiet(argv: string[], cwd: string, timeoutMs = 0): Promise<Quiet> {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key === 'INPUT_DESCRIBE' || key === 'NODE_OPTIONS' || /^(TWYLT|TOOLSPEC)_/.test(key)) delete env[key];
  return new Promise((done, fail) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = timeoutMs > 0 ? setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs) : undefined;
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), timedOut });
    });
  });
}

