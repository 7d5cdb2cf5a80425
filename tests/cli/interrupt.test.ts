/**
 * Interrupting `twylt call`, `twylt describe` or the start of `twylt inspect` (Ctrl-C, kill, a closed terminal) ends the
 * tool too: it runs in its own process group, out of reach of a terminal's Ctrl-C, so twylt
 * must kill it, and remove the file transport's exchange directory, before it exits with
 * 128 + the signal's number, as a shell reports it.
 *
 * The tool writes its pid to a file once it runs (the readiness signal), then hangs.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isAlive, waitGone } from '../support/processes.js';
import { twyltBin } from '../support/twylt-cli.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-interrupt-')));
/** Tools a failing test left running. */
const started: number[] = [];
afterAll(() => {
  for (const pid of started) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

/** Node, announcing its pid in `pidFile` (whole, by a rename), then running until killed. */
const hangingTool = (pidFile: string) => [
  process.execPath,
  '-e',
  `const fs = require('node:fs'); fs.writeFileSync(${JSON.stringify(`${pidFile}.tmp`)}, String(process.pid)); fs.renameSync(${JSON.stringify(`${pidFile}.tmp`)}, ${JSON.stringify(pidFile)}); setInterval(() => {}, 1000);`,
];

async function waitForFile(file: string, ms = 15_000): Promise<string> {
  const end = Date.now() + ms;
  while (!existsSync(file)) {
    if (Date.now() > end) throw new Error(`${file} did not appear within ${ms} ms: the tool never ran`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return readFileSync(file, 'utf8');
}

/** Run `twylt <args> -- <hanging tool>` in a fresh directory, send `signal` once the tool runs. */
async function interrupt(args: string[], signal: NodeJS.Signals) {
  const cwd = mkdtempSync(join(scratch, 'cwd-'));
  const pidFile = join(scratch, `${signal}-${args[0]}-${Date.now()}.pid`);
  const child = spawn(process.execPath, [twyltBin, ...args, '--', ...hangingTool(pidFile)], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, how) => resolve({ code, signal: how })));
  const tool = Number(await waitForFile(pidFile));
  started.push(tool);
  child.kill(signal);
  const { code } = await exited;
  return { code, stderr, toolGone: await waitGone(tool), leftovers: readdirSync(cwd) };
}

describe('twylt call, interrupted while the tool runs', () => {
  it('SIGINT (Ctrl-C), --transport file: the tool is killed, no .twylt-call-* is left, exit 130', async () => {
    const result = await interrupt(['call', '--transport', 'file', '--input', '{}'], 'SIGINT');
    expect(result).toEqual({ code: 130, stderr: 'twylt call: interrupted\n', toolGone: true, leftovers: [] });
  }, 30_000);

  it('SIGTERM, the cli transport: the tool is killed, exit 143', async () => {
    const result = await interrupt(['call', '--input', '{}'], 'SIGTERM');
    expect(result).toEqual({ code: 143, stderr: 'twylt call: interrupted\n', toolGone: true, leftovers: [] });
  }, 30_000);

  it('SIGHUP (the terminal closed), --transport file: the tool is killed, nothing is left, exit 129', async () => {
    const result = await interrupt(['call', '--transport', 'file', '--input', '{}'], 'SIGHUP');
    expect(result).toEqual({ code: 129, stderr: 'twylt call: interrupted\n', toolGone: true, leftovers: [] });
  }, 30_000);
});

describe('twylt describe, interrupted while the tool runs', () => {
  it('SIGINT: the tool is killed, exit 130', async () => {
    const result = await interrupt(['describe'], 'SIGINT');
    expect(result).toEqual({ code: 130, stderr: 'twylt describe: interrupted\n', toolGone: true, leftovers: [] });
  }, 30_000);
});

describe('twylt inspect, interrupted while the tools describe themselves', () => {
  it('SIGINT: the describing tool is killed, exit 130', async () => {
    const result = await interrupt(['inspect', '--no-open', '--port', '0'], 'SIGINT');
    expect(result).toEqual({ code: 130, stderr: 'twylt inspect: interrupted\n', toolGone: true, leftovers: [] });
  }, 30_000);
});
