/**
 * The sandbox stops a hostile tool (issue 28, ADR 0032): every attempt succeeds in a consumer
 * without a sandbox and fails in one with it, and the sandboxed consumer goes on serving. The
 * consumer is a real Node.js process using the built client (tests/fixtures/sandbox/
 * consumer.mjs), with a planted key in its HOME and a secret in its environment.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../support/processes.js';
import { SANDBOX_SKIP_REASON } from './support.js';

const CONSUMER = fileURLToPath(new URL('../fixtures/sandbox/consumer.mjs', import.meta.url));
const SECRET = 'hunter2-consumer-secret';
const KEY = '-----BEGIN OPENSSH PRIVATE KEY----- planted';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-sandbox-'));
const home = join(scratch, 'home');
const workspace = join(scratch, 'workspace');
const elsewhere = join(scratch, 'elsewhere');
let tcp: Server;
let tcpPort = 0;
let web: HttpServer;
let webPort = 0;

beforeAll(async () => {
  mkdirSync(join(home, '.ssh'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), KEY);
  chmodSync(join(home, '.ssh', 'id_ed25519'), 0o600);
  mkdirSync(workspace);
  mkdirSync(elsewhere);
  writeFileSync(join(elsewhere, 'notes.txt'), 'another project');
  tcp = createServer((socket) => socket.end('hello from the loopback\n'));
  web = createHttpServer((_req, res) => res.end('served'));
  tcpPort = await listen(tcp);
  webPort = await listen(web);
});

afterAll(() => {
  tcp?.close();
  web?.close();
  rmSync(scratch, { recursive: true, force: true });
});

function listen(server: Server | HttpServer): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

interface Answer {
  ready?: number;
  ok?: boolean;
  result?: unknown;
  error?: string;
  limit?: string;
  message?: string;
  stderr?: string;
}

/** A consumer process and a way to ask it for one call. */
class Consumer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly #lines: Interface;
  readonly #pending: ((answer: Answer) => void)[] = [];
  readonly ready: Promise<Answer>;
  stderr = '';

  constructor(mode: 'sandbox' | 'plain', policy: object = {}) {
    this.child = spawn(process.execPath, [CONSUMER, mode, JSON.stringify(policy), workspace], {
      env: { ...process.env, HOME: home, CONSUMER_SECRET: SECRET },
    });
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    this.#lines = createInterface({ input: this.child.stdout });
    this.#lines.on('line', (line) => this.#pending.shift()?.(JSON.parse(line)));
    // Every call still waiting learns that the consumer is gone.
    this.child.once('exit', () => {
      for (const answer of this.#pending.splice(0)) answer({ ok: false, error: 'consumer gone' });
    });
    this.ready = new Promise((resolve) => this.#pending.push(resolve));
  }

  get pid(): number {
    return this.child.pid!;
  }

  call(input: Record<string, unknown>): Promise<Answer> {
    return new Promise((resolve) => {
      this.#pending.push(resolve);
      if (this.child.exitCode !== null || this.child.signalCode !== null) resolve({ ok: false, error: 'consumer gone' });
      else this.child.stdin.write(`${JSON.stringify(input)}\n`);
    });
  }

  stop(): void {
    this.child.stdin.end();
    if (isAlive(this.pid)) this.child.kill('SIGKILL');
  }
}

/** The attempts, each with what it gets when nothing stands in its way. */
const attempts = (consumerPid: number) => ({
  'reads a planted key in ~/.ssh': [{ attempt: 'read', path: join(home, '.ssh', 'id_ed25519') }, KEY],
  'reads a file in another folder': [{ attempt: 'read', path: join(elsewhere, 'notes.txt') }, 'another project'],
  'writes outside its workspace': [{ attempt: 'write', path: join(elsewhere, 'written.txt') }, 'written'],
  "reads the consumer's secret from its own environment": [{ attempt: 'own_env', name: 'CONSUMER_SECRET' }, SECRET],
  "reads the consumer's environment through /proc": [{ attempt: 'environ', pid: consumerPid }, expect.stringContaining(SECRET)],
  'opens a raw TCP connection to a loopback server': [{ attempt: 'tcp', port: tcpPort }, 'hello from the loopback'],
  // Refused by the proxy itself (403), not by a relay that is not there.
  'sends a request to a host not allowed (through the proxy when there is one)': [{ attempt: 'http', url: `http://127.0.0.1:${webPort}/` }, 'served', 'HTTP 403'],
});

describe.skipIf(SANDBOX_SKIP_REASON !== undefined)(`a hostile tool${SANDBOX_SKIP_REASON ? ` (skipped: ${SANDBOX_SKIP_REASON})` : ''}`, () => {
  const plain = new Consumer('plain');
  // allowNet names a host, so the proxy runs and the request below is refused by it.
  const boxed = new Consumer('sandbox', { allowNet: ['example.invalid'], memoryMb: 128, processes: 64, cpuSeconds: 1 });
  afterAll(() => {
    plain.stop();
    boxed.stop();
  });

  it('both consumers start (the sandboxed one after checking that bwrap works)', async () => {
    expect((await plain.ready).ready, plain.stderr).toBe(plain.pid);
    expect((await boxed.ready).ready, boxed.stderr).toBe(boxed.pid);
  });

  for (const [name, index] of Object.keys(attempts(0)).map((key, i) => [key, i] as const)) {
    it(`${name}: succeeds without the sandbox, fails with it, and the consumer serves on`, async () => {
      const plainCase = Object.values(attempts(plain.pid))[index]!;
      const boxedCase = Object.values(attempts(boxed.pid))[index]!;
      const without = await plain.call(plainCase[0] as Record<string, unknown>);
      expect(without, JSON.stringify(without)).toMatchObject({ ok: true, result: plainCase[1] });
      const within = await boxed.call(boxedCase[0] as Record<string, unknown>);
      expect(within.ok, JSON.stringify(within)).toBe(false);
      if (boxedCase[2]) expect(within.stderr).toContain(boxedCase[2]);
      expect(await boxed.call({ attempt: 'ping' })).toMatchObject({ ok: true, result: 'pong' });
    }, 240_000);
  }

  it('kills the consumer: it dies without the sandbox, and the sandboxed one serves on', async () => {
    const victim = new Consumer('plain');
    await victim.ready;
    await victim.call({ attempt: 'kill', pid: victim.pid });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(isAlive(victim.pid)).toBe(false);
    const within = await boxed.call({ attempt: 'kill', pid: boxed.pid });
    expect(within.ok, JSON.stringify(within)).toBe(false);
    expect(isAlive(boxed.pid)).toBe(true);
    expect(await boxed.call({ attempt: 'ping' })).toMatchObject({ ok: true, result: 'pong' });
  });

  it('leaves a grandchild in a session of its own that writes later: it writes without the sandbox, and never with it', async () => {
    const late = { plain: join(workspace, 'late-plain.txt'), boxed: join(workspace, 'late-boxed.txt') };
    expect(await plain.call({ attempt: 'linger', path: late.plain })).toMatchObject({ ok: true });
    expect(await boxed.call({ attempt: 'linger', path: late.boxed })).toMatchObject({ ok: true });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(existsSync(late.plain)).toBe(true);
    expect(existsSync(late.boxed)).toBe(false);
  });

  it('carries a file in /tmp to the next call: found without the sandbox, gone with it', async () => {
    const name = `twylt-carry-${process.pid}`;
    try {
      expect(await plain.call({ attempt: 'tmp_put', name })).toMatchObject({ ok: true });
      expect(await plain.call({ attempt: 'tmp_get', name })).toMatchObject({ ok: true, result: 'carried' });
      expect(await boxed.call({ attempt: 'tmp_put', name: `${name}-boxed` })).toMatchObject({ ok: true });
      expect(await boxed.call({ attempt: 'tmp_get', name: `${name}-boxed` })).toMatchObject({ ok: false });
    } finally {
      rmSync(join(tmpdir(), name), { force: true });
    }
    expect(existsSync(join(tmpdir(), `${name}-boxed`))).toBe(false);
  });

  it('a fork bomb: 150 processes start without the sandbox; with it the processes limit stops it, a ResourceLimitError', async () => {
    const without = await plain.call({ attempt: 'fork_bomb', count: 150 });
    expect(without, JSON.stringify(without)).toMatchObject({ ok: true, result: '150 started' });
    expect(await boxed.call({ attempt: 'fork_bomb', count: 150 })).toMatchObject({ ok: false, error: 'ResourceLimitError', limit: 'processes' });
    expect(await boxed.call({ attempt: 'ping' })).toMatchObject({ ok: true, result: 'pong' });
  }, 240_000);

  it('a memory bomb: 400 MB are held without the sandbox; with it the memory limit stops it, a ResourceLimitError', async () => {
    const without = await plain.call({ attempt: 'memory_bomb', mb: 400 });
    expect(without, JSON.stringify(without)).toMatchObject({ ok: true, result: '400 MB held' });
    expect(await boxed.call({ attempt: 'memory_bomb', mb: 400 })).toMatchObject({ ok: false, error: 'ResourceLimitError', limit: 'memory' });
    expect(await boxed.call({ attempt: 'ping' })).toMatchObject({ ok: true, result: 'pong' });
  }, 240_000);

  it('a CPU burner: 2 s of CPU without the sandbox; with it the CPU-time limit stops it, a ResourceLimitError', async () => {
    const without = await plain.call({ attempt: 'cpu_burn', seconds: 2 });
    expect(without, JSON.stringify(without)).toMatchObject({ ok: true, result: 'burnt' });
    expect(await boxed.call({ attempt: 'cpu_burn', seconds: 2 })).toMatchObject({ ok: false, error: 'ResourceLimitError', limit: 'cpu_time' });
    expect(await boxed.call({ attempt: 'ping' })).toMatchObject({ ok: true, result: 'pong' });
  }, 240_000);
});
