/**
 * Starting the real `twylt-mcp --http` command on 127.0.0.1 (a port the OS picks) and
 * talking to it: with the MCP SDK's own Streamable HTTP client, or with raw HTTP requests
 * when a test needs to send what no client would (a foreign Host, a wrong token, bad JSON).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bridgeCommand, bridgeEnv } from './mcp.js';
import { ROOT } from './process.js';
import { allChildrenOf, isKeeper } from './processes.js';

const LISTENING = /twylt-mcp: listening on (http:\/\/\S+)\n/;

export interface HttpBridgeProcess {
  /** `http://127.0.0.1:PORT/mcp`. */
  url: string;
  /** `http://127.0.0.1:PORT`. */
  base: string;
  pid: number;
  child: ChildProcess;
  stderr(): string;
  /** The JSON log lines so far, parsed. */
  events(): Array<Record<string, any>>;
  /** Resolves when the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** A connected SDK client (with the token as a bearer header when given). */
  connect(options?: { token?: string; fetch?: typeof fetch }): Promise<Client>;
  /** SIGTERM, then wait for the end (SIGKILL after 20 s, which fails the caller's checks). */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Start `twylt-mcp --http 127.0.0.1:0 ARGS...` and wait for its listening line; `command` runs the bridge (default: bridgeCommand()). */
export async function startHttpBridge(args: readonly string[], env: Record<string, string> = {}, command: readonly string[] = bridgeCommand()): Promise<HttpBridgeProcess> {
  const child = spawn(command[0]!, [...command.slice(1), '--http', '127.0.0.1:0', ...args], {
    cwd: ROOT,
    env: { ...bridgeEnv(), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // 'close', not 'exit': stderr is read to its end by then, so events() is complete.
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line within 20 s:\n${stderr}`)), 20_000);
    const check = () => {
      const match = LISTENING.exec(stderr);
      if (match) {
        clearTimeout(timer);
        child.stderr!.off('data', check);
        resolve(match[1]!);
      }
    };
    child.stderr!.on('data', check);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`twylt-mcp --http ended (exit ${code}) before listening:\n${stderr}`));
    });
  });
  const clients: Client[] = [];
  const bridge: HttpBridgeProcess = {
    url,
    base: url.replace(/\/mcp$/, ''),
    pid: child.pid!,
    child,
    stderr: () => stderr,
    events: () =>
      stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, any>),
    exited,
    async connect(options = {}) {
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: options.token ? { headers: { authorization: `Bearer ${options.token}` } } : undefined,
        fetch: options.fetch,
      });
      const client = new Client({ name: 'twylt-mcp-http-tests', version: '0.0.0' });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    async stop() {
      await Promise.all(clients.map((client) => client.close().catch(() => {})));
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const end = await exited;
      clearTimeout(timer);
      return end;
    },
  };
  return bridge;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Headers an MCP client sends with every POST. */
export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** One HTTP request with exactly these headers (Host included, when given). */
export function rawRequest(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: options.method ?? 'POST', headers: options.headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.setTimeout(30_000, () => request.destroy(new Error(`no answer from ${url} within 30 s`)));
    request.on('error', reject);
    request.end(options.body);
  });
}

/** A JSON-RPC tools/call as a raw POST body. */
export function toolsCall(id: number, name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
}

/** The JSON-RPC messages of an SSE response body (`event: message` / `data: {...}`). */
export function sseMessages(body: string): Array<Record<string, any>> {
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, any>);
}

/** Lines in a file (0 when it does not exist yet): how often the sleeper started. */
export function lineCount(file: string): number {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

/**
 * The tool processes whose parent is `pid`, from /proc: the kernel's own children lists when
 * it keeps them, else every process's stat line. The consumer's keeper (ADR 0029), a child
 * too, is left out. Undefined where there is no /proc.
 */
export function childrenOf(pid: number): number[] | undefined {
  const children = allChildrenOf(pid);
  return children?.filter((child) => !isKeeper(child));
}

