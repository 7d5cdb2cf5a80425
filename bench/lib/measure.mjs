/**
 * Running benchmarked commands: one timed run (wall time from spawn to exit, peak RSS from
 * the maxrss preload), a checked warm-up run, and rounds that alternate the commands so
 * that the machine's noise falls on every command alike.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PRELOAD = fileURLToPath(new URL('./maxrss.cjs', import.meta.url));

/**
 * A command: `args` go to node after the preload. `stdin` is a file fed as stdin (else
 * /dev/null); `output` is a file the command writes (file mode), removed before each run.
 */
export function node(args, options = {}) {
  return { argv: [process.execPath, '--require', PRELOAD, ...args], cwd: options.cwd, stdin: options.stdin, output: options.output };
}

/**
 * A command that is a single executable (`twylt build --executable`): it takes no Node
 * options on its command line, so the same preload comes through NODE_OPTIONS.
 */
export function executable(file, args, options = {}) {
  return { argv: [file, ...args], env: { NODE_OPTIONS: `--require ${JSON.stringify(PRELOAD)}` }, cwd: options.cwd, stdin: options.stdin, output: options.output };
}

/** The environment of every run: none of the caller's switches reach the tools. */
function cleanEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key === 'NODE_OPTIONS' || key === 'INPUT_DESCRIBE' || key.startsWith('TWYLT_') || key.startsWith('TOOLSPEC_')) delete env[key];
  }
  return env;
}
const ENV = cleanEnv();

/**
 * One run. `capture` hashes what the command printed (or wrote to its output file) so the
 * warm-up can check that a tool and its floor produce the same bytes.
 */
export function runOnce(command, capture = false) {
  if (command.output) rmSync(command.output, { force: true });
  const stdinFd = command.stdin ? openSync(command.stdin, 'r') : 'ignore';
  const hash = capture ? createHash('sha256') : null;
  let bytes = 0;
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command.argv[0], command.argv.slice(1), {
      cwd: command.cwd,
      env: command.env ? { ...ENV, ...command.env } : ENV,
      stdio: [stdinFd, capture ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      // Each run in a session of its own: Linux then gives it its own scheduler autogroup, so
      // its CPU share on a busy machine does not depend on what else runs in our session.
      detached: true,
    });
    if (typeof stdinFd === 'number') closeSync(stdinFd);
    const stderr = [];
    let rss = '';
    child.stdout?.on('data', (chunk) => {
      bytes += chunk.length;
      hash.update(chunk);
    });
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.stdio[3].on('data', (chunk) => (rss += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) {
        reject(new Error(`${command.argv.join(' ')} exited ${code}: ${Buffer.concat(stderr).toString().slice(0, 500)}`));
        return;
      }
      const result = { ms, rssKiB: Number(rss) || null };
      if (capture) {
        if (command.output) {
          const written = readFileSync(command.output);
          result.digest = `${createHash('sha256').update(written).digest('hex')} (${written.length} bytes, file)`;
        } else {
          result.digest = `${hash.digest('hex')} (${bytes} bytes)`;
        }
      }
      resolve(result);
    });
  });
}

/**
 * `rounds` rounds over `commands` (an object id -> command); each round starts one command
 * later, so no command always runs first or right after the same neighbour. One unmeasured
 * warm-up run each fills the page cache and returns the output digests.
 */
export async function alternate(commands, rounds, progress = () => {}) {
  const ids = Object.keys(commands);
  const digests = {};
  for (const id of ids) digests[id] = (await runOnce(commands[id], true)).digest;
  const samples = Object.fromEntries(ids.map((id) => [id, []]));
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < ids.length; k++) {
      const id = ids[(k + round) % ids.length];
      samples[id].push(await runOnce(commands[id]));
    }
    progress(round + 1, rounds);
  }
  return { samples, digests };
}

export function median(values) {
  const sorted = values.filter((v) => v !== null).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
