/** Starting the real `twylt-mcp` command and talking to it with the MCP SDK's own client. */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from './process.js';
import { JS_RUNTIME } from './runtimes.js';

export const BRIDGE_CLI = `${ROOT}packages/twylt-mcp/dist/cli.js`;
export const SLEEPER = [...JS_RUNTIME, `${ROOT}tests/fixtures/mcp/sleeper.mjs`];
export const MISFIT = [...JS_RUNTIME, `${ROOT}tests/fixtures/mcp/misfit.mjs`];
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

/** The repository's `twylt-mcp`, on the runtime under test. */
export function bridgeCommand(): string[] {
  if (!existsSync(BRIDGE_CLI)) throw new Error(`${BRIDGE_CLI} is missing: run npm run build first`);
  return [...JS_RUNTIME, BRIDGE_CLI];
}

/**
 * Start `twylt-mcp ARGS...` over stdio, `env` added to bridgeEnv(), and connect a client to it;
 * `command` runs the bridge (default: bridgeCommand()), in `cwd` (default: the checkout; one
 * that the bridge's user can enter when it runs as another: see unprivileged.ts).
 */
export async function startBridge(args: readonly string[], env: Record<string, string> = {}, command: readonly string[] = bridgeCommand(), cwd: string = ROOT): Promise<Bridge> {
  const transport = new StdioClientTransport({
    command: command[0]!,
    args: [...command.slice(1), ...args],
    cwd,
    env: { ...bridgeEnv(), ...env },
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

/** A bridge driven line by line, for what an SDK client never sends (bad JSON, huge lines). */
export interface RawBridge {
  child: ChildProcessWithoutNullStreams;
  /** Write one line (a newline is added). */
  send(line: string): void;
  /** Send a JSON-RPC request and wait, at most `ms`, for the answer with its id. */
  request(method: string, params: unknown, id: number, ms?: number): Promise<Record<string, any>>;
  /** The next answer (in arrival order) that `match` accepts, waiting at most `ms`. */
  answer(match: (message: Record<string, any>) => boolean, what: string, ms?: number): Promise<Record<string, any>>;
  stderr(): string;
  /** Resolves with the exit code once the bridge has ended. */
  exited: Promise<number | null>;
}

/** Start `twylt-mcp ARGS...` over stdio, `env` added to bridgeEnv(), and initialize it by hand. */
export async function startRawBridge(args: readonly string[], env: Record<string, string> = {}): Promise<RawBridge> {
  const child = spawn(JS_RUNTIME[0]!, [...JS_RUNTIME.slice(1), BRIDGE_CLI, ...args], { cwd: ROOT, env: { ...bridgeEnv(), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const messages: Record<string, any>[] = [];
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    let newline: number;
    while ((newline = stdout.indexOf('\n')) !== -1) {
      messages.push(JSON.parse(stdout.slice(0, newline)) as Record<string, any>);
      stdout = stdout.slice(newline + 1);
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.on('error', () => {});
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const send = (line: string) => void child.stdin.write(`${line}\n`);
  const answer = async (match: (message: Record<string, any>) => boolean, what: string, ms = 10_000) => {
    await waitFor(() => messages.some(match), `${what}; stderr: ${stderr}`, ms);
    return messages.splice(messages.findIndex(match), 1)[0]!;
  };
  const request = (method: string, params: unknown, id: number, ms?: number) => {
    send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return answer((message) => message.id === id, `the answer to ${method} #${id}`, ms);
  };
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } }, 0, 20_000);
  send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return { child, send, request, answer, stderr: () => stderr, exited };
}

/** The first two messages of a hand-written MCP exchange. */
export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-test', version: '0' } },
};
export const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };

/** Start the bridge, send `requests` (a string as it is) one per line, and collect the raw lines of the answers by id. */
export async function rawExchange(args: readonly string[], requests: readonly (object | string)[]): Promise<Map<number, string>> {
  const child = spawn(process.execPath, [BRIDGE_CLI, ...args], { cwd: ROOT, env: bridgeEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  const answers = new Map<number, string>();
  const wanted = requests.filter((request) => /"id":/.test(typeof request === 'string' ? request : JSON.stringify(request))).length;
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within 20 s; got ${[...answers.values()].join('\n')}`)), 20_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const id = (JSON.parse(line) as { id?: number }).id;
      if (id !== undefined) answers.set(id, line);
      if (answers.size === wanted) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  for (const request of requests) child.stdin.write(`${typeof request === 'string' ? request : JSON.stringify(request)}\n`);
  try {
    await done;
  } finally {
    child.stdin.end();
    child.kill();
  }
  return answers;
}
