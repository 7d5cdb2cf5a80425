/** Starting the real `twylt-mcp` command and talking to it with the MCP SDK's own client. */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from './process.js';

export const BRIDGE_CLI = `${ROOT}packages/twylt-mcp/dist/cli.js`;
export const SLEEPER = [process.execPath, `${ROOT}tests/fixtures/mcp/sleeper.mjs`];
export const PY_ECHO = ['python3', `${ROOT}tests/fixtures/python/echo_tool.py`];

/** Whether the foreign Python fixtures can run here. */
export const HAS_PYTHON = spawnSync('python3', ['--version']).status === 0;

export interface Bridge {
  client: Client;
  /** The bridge's process id. */
  pid: number;
  /** Everything the bridge wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** The environment for the bridge: ours, minus switches that would change how tools answer. */
export function bridgeEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(TWYLT_|TOOLSPEC_|INPUT_DESCRIBE$|NODE_OPTIONS$)/.test(key)) env[key] = value;
  }
  return env;
}

/** Start `twylt-mcp ARGS...` over stdio and connect a client to it. */
export async function startBridge(args: readonly string[]): Promise<Bridge> {
  if (!existsSync(BRIDGE_CLI)) throw new Error(`${BRIDGE_CLI} is missing: run npm run build first`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BRIDGE_CLI, ...args],
    cwd: ROOT,
    env: bridgeEnv(),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'twylt-mcp-tests', version: '0.0.0' });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`the bridge did not start: ${(error as Error).message}\n${stderr}`);
  }
  return { client, pid: transport.pid!, stderr: () => stderr, close: () => client.close() };
}

/** The one text block of a tool result. */
export function textOf(result: unknown): string {
  const content = (result as { content: Array<{ type: string; text?: string }> }).content;
  if (content.length !== 1 || content[0]!.type !== 'text') throw new Error(`expected one text block, got ${JSON.stringify(content)}`);
  return content[0]!.text!;
}

/** Poll `check` until it holds; fail naming `what` after `ms`. */
export async function waitFor(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether a process is still alive; a zombie (ended, not yet reaped) counts as ended. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  try {
    // Linux: the state follows the parenthesised command name in /proc/PID/stat.
    return !/\)\s+Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** The pid a sleeper writes to `file` once its call runs (the file appears whole: see sleeper.mjs). */
export async function sleeperPid(file: string): Promise<number> {
  await waitFor(() => existsSync(file), `the sleeper to write ${file}`);
  return Number(readFileSync(file, 'utf8'));
}
