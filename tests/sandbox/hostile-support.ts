/**
 * What the hostile sandbox suites share (tests/sandbox/hostile*.test.ts): a scene (a HOME with a
 * planted key, a workspace, another project's folder, secrets in the consumer's environment,
 * loopback servers) and a consumer process that calls the hostile tool
 * (tests/fixtures/sandbox/consumer.mjs, hostile.mjs), sandboxed or not, as root or as nobody.
 *
 * As nobody, the consumer runs from a world-readable copy of the built packages and the
 * fixtures (tests/support/unprivileged.ts), and the scene belongs to nobody, so that without
 * the sandbox every attempt succeeds as that user too.
 */
import { spawn, type ChildProcessWithoutNullStreams, type SpawnOptionsWithoutStdio } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { isAlive } from '../support/processes.js';
import { ROOT } from '../support/process.js';
import { AS_NOBODY, NOBODY, UNPRIVILEGED_SKIP_REASON, type UnprivilegedCopy, unprivilegedCopy } from '../support/unprivileged.js';
import { SANDBOX_SKIP_REASON } from './support.js';

/** Secrets in the consumer's environment that no sandboxed tool may see. */
export const SECRETS = {
  CONSUMER_SECRET: 'hunter2-consumer-secret',
  // The bridge's own token, and any other TWYLT_* variable not in the protocol's list.
  TWYLT_MCP_TOKEN: 'twylt-bridge-token-planted',
  TWYLT_SOMETHING: 'twylt-something-planted',
} as const;
export const KEY = '-----BEGIN OPENSSH PRIVATE KEY----- planted';

/** Who runs the consumer: root, or nobody (through setpriv) where that can be done here. */
export type ConsumerUser = 'root' | 'nobody';

/** Why the hostile suite cannot run as `user` here, or undefined when it can. */
export function hostileSkipReason(user: ConsumerUser): string | undefined {
  if (SANDBOX_SKIP_REASON) return SANDBOX_SKIP_REASON;
  if (user === 'root') return process.getuid?.() === 0 ? undefined : `the consumer runs as root, and the tests run as uid ${process.getuid?.()}`;
  return UNPRIVILEGED_SKIP_REASON;
}

/** The answer of one call, as consumer.mjs writes it. */
export interface Answer {
  ready?: number;
  ok?: boolean;
  result?: unknown;
  error?: string;
  limit?: string;
  message?: string;
  stderr?: string;
}

function listen(server: Server | HttpServer): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

/** Give `path` and everything under it to nobody. */
function chownTree(path: string): void {
  chownSync(path, NOBODY.uid, NOBODY.gid);
  if (lstatSync(path).isDirectory()) for (const entry of readdirSync(path)) chownTree(join(path, entry));
}

/** The folders, servers and code one suite's consumers share. Create it in `beforeAll`, `close()` in `afterAll`. */
export class HostileScene {
  readonly user: ConsumerUser;
  readonly home: string;
  readonly workspace: string;
  readonly elsewhere: string;
  /** A TCP server on the loopback that answers one line. */
  tcpPort = 0;
  /** An HTTP server on the loopback that answers `served`. */
  webPort = 0;
  readonly #folder: string;
  readonly #copy: UnprivilegedCopy | undefined;
  readonly #servers: (Server | HttpServer)[] = [];

  private constructor(user: ConsumerUser) {
    this.user = user;
    this.#copy = user === 'nobody' ? unprivilegedCopy(['tests/fixtures/sandbox']) : undefined;
    this.#folder = this.#copy ? this.#copy.scratch('scene') : mkdtempSync(join(tmpdir(), 'twylt-sandbox-'));
    this.home = join(this.#folder, 'home');
    this.workspace = join(this.#folder, 'workspace');
    this.elsewhere = join(this.#folder, 'elsewhere');
  }

  static async create(user: ConsumerUser): Promise<HostileScene> {
    const scene = new HostileScene(user);
    mkdirSync(join(scene.home, '.ssh'), { recursive: true });
    writeFileSync(join(scene.home, '.ssh', 'id_ed25519'), KEY);
    chmodSync(join(scene.home, '.ssh', 'id_ed25519'), 0o600);
    mkdirSync(scene.workspace);
    mkdirSync(scene.elsewhere);
    writeFileSync(join(scene.elsewhere, 'notes.txt'), 'another project');
    if (user === 'nobody') for (const folder of [scene.home, scene.workspace, scene.elsewhere]) chownTree(folder);
    const tcp = createServer((socket) => socket.end('hello from the loopback\n'));
    const web = createHttpServer((_req, res) => res.end('served'));
    scene.#servers.push(tcp, web);
    scene.tcpPort = await listen(tcp);
    scene.webPort = await listen(web);
    return scene;
  }

  /** argv of the consumer, and the folder it starts in. */
  consumerCommand(): { argv: string[]; cwd: string } {
    if (!this.#copy) return { argv: [process.execPath, join(ROOT, 'tests/fixtures/sandbox/consumer.mjs')], cwd: ROOT };
    return { argv: [...AS_NOBODY, process.execPath, this.#copy.path('tests/fixtures/sandbox/consumer.mjs')], cwd: this.#copy.root };
  }

  close(): void {
    for (const server of this.#servers) server.close();
    if (this.#copy) this.#copy.remove();
    else rmSync(this.#folder, { recursive: true, force: true });
  }
}

/** A consumer process that answers each line of JSON on its stdin with one line, in order. */
export class LineConsumer<A extends { ok?: boolean; error?: string } = Answer> {
  readonly child: ChildProcessWithoutNullStreams;
  readonly #pending: ((answer: A) => void)[] = [];
  /** Its first line: it is ready. */
  readonly ready: Promise<A>;
  stderr = '';

  constructor(argv: readonly string[], options: SpawnOptionsWithoutStdio) {
    this.child = spawn(argv[0]!, argv.slice(1), options);
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    createInterface({ input: this.child.stdout }).on('line', (line) => this.#pending.shift()?.(JSON.parse(line)));
    // Every call still waiting learns that the consumer is gone.
    this.child.once('exit', () => {
      for (const answer of this.#pending.splice(0)) answer({ ok: false, error: 'consumer gone' } as A);
    });
    this.ready = new Promise((resolve) => this.#pending.push(resolve));
  }

  /** The consumer's pid (setpriv execs it, so the pid is the same). */
  get pid(): number {
    return this.child.pid!;
  }

  call(input: Record<string, unknown>): Promise<A> {
    return new Promise((resolve) => {
      this.#pending.push(resolve);
      if (this.child.exitCode !== null || this.child.signalCode !== null) resolve({ ok: false, error: 'consumer gone' } as A);
      else this.child.stdin.write(`${JSON.stringify(input)}\n`);
    });
  }

  stop(): void {
    this.child.stdin.end();
    if (isAlive(this.pid)) this.child.kill('SIGKILL');
  }
}

/** A consumer process (consumer.mjs) and a way to ask it for one call. */
export class Consumer extends LineConsumer {
  /** `policy` is prepareSandbox's (mode `sandbox`); `env` is added to the consumer's environment. */
  constructor(scene: HostileScene, mode: 'sandbox' | 'plain', policy: object = {}, env: Record<string, string> = {}) {
    const { argv, cwd } = scene.consumerCommand();
    super([...argv, mode, JSON.stringify(policy), scene.workspace], { cwd, env: { ...process.env, HOME: scene.home, ...SECRETS, ...env } });
  }
}

/** The tool's own error (hostile.mjs writes its `exception` to stderr): the errno code or error name, and the message. */
export function toolException(answer: Answer): { type: string; message: string } | undefined {
  for (const line of (answer.stderr ?? '').split('\n')) {
    try {
      const parsed = JSON.parse(line) as { error?: { exception?: { type: string; message: string } } };
      if (parsed.error?.exception) return parsed.error.exception;
    } catch {
      // not the error line
    }
  }
  return undefined;
}
