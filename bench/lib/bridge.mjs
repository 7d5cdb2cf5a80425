/** `twylt-mcp --http` for the benchmarks: started on 127.0.0.1 (a port the OS picks) with a clean environment. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const BRIDGE = join(new URL('../..', import.meta.url).pathname, 'packages/twylt-mcp/dist/cli.js');

/** `twylt-mcp --http 127.0.0.1:0 ARGS...`; resolves with its URL and a stop function. */
export async function startBridge(args, extraEnv = {}) {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key === 'NODE_OPTIONS' || key.startsWith('TWYLT_') || key.startsWith('TOOLSPEC_')) delete env[key];
  const child = spawn(process.execPath, [BRIDGE, '--http', '127.0.0.1:0', ...args], { env: { ...env, ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the bridge did not start within 30 s:\n${stderr}`)), 30_000);
    child.stderr.on('data', (chunk) => {
      // Keep only what a failure message needs: the call log grows with every call.
      stderr = (stderr + chunk).slice(-4000);
      const match = /listening on (http:\S+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on('exit', (code) => reject(new Error(`the bridge ended (exit ${code}):\n${stderr}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

/** The p-th percentile (nearest rank) of `values`. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
