/** `twylt-mcp --http` for a benchmark: the built bridge on 127.0.0.1, a port the OS picks. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const BRIDGE = join(new URL('../..', import.meta.url).pathname, 'packages/twylt-mcp/dist/cli.js');

/**
 * Start the bridge with `args` after `--http 127.0.0.1:0`, in an environment without the
 * switches that change how tools answer; resolves with its URL and a stop function.
 */
export async function startHttpBridge(args) {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key === 'NODE_OPTIONS' || key.startsWith('TWYLT_') || key.startsWith('TOOLSPEC_')) delete env[key];
  const child = spawn(process.execPath, [BRIDGE, '--http', '127.0.0.1:0', ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
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
