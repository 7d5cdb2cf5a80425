/**
 * What every robustness test shares: the property-test knobs, in-process runs of a tool,
 * and the one oracle all outcomes must satisfy.
 */
import { spawn, type SpawnOptions } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, expect } from 'vitest';
import { ROOT, type Finished } from '../support/process.js';

/**
 * Property runs. Fixed seed and counts by default (CI); for a longer local search:
 * `TWYLT_FC_RUNS=5000 TWYLT_FC_SEED=random npx vitest run tests/robustness`.
 * Runs through real processes are a fifteenth of the in-process ones (at least 4).
 */
const runs = Number(process.env.TWYLT_FC_RUNS ?? 150);
const seedSetting = process.env.TWYLT_FC_SEED;
export const FC = {
  seed: seedSetting === 'random' ? Date.now() ^ (Math.random() * 2 ** 31) : Number(seedSetting ?? 20261130),
  inProcess: runs,
  processes: Math.max(4, Math.ceil(runs / 15)),
};

/** A compiled robustness fixture (tests/fixtures/robustness/<name>.ts). */
export function robustFixture(name: string): string[] {
  const compiled = `${ROOT}build/tests/fixtures/robustness/${name}.js`;
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run npm run build first`);
  return [process.execPath, compiled];
}

/** One temporary root per test file, removed after it; traversable, for tools run as another user. */
const scratchRoot = mkdtempSync(join(tmpdir(), 'twylt-robust-'));
chmodSync(scratchRoot, 0o755);
afterAll(() => rmSync(scratchRoot, { recursive: true, force: true }));

/** A fresh directory of its own for one run. */
export function scratchDir(): string {
  return mkdtempSync(join(scratchRoot, 'run-'));
}

/** What an in-process run looks like from outside: the same fields a subprocess gives. */
export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface InProcessIo {
  argv?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Bytes on stdin; `tty` makes stdin a terminal (never read). */
  stdin?: Uint8Array | string | 'tty';
}

interface Runnable {
  runWith(io: {
    argv: readonly string[];
    env: NodeJS.ProcessEnv;
    cwd: string;
    stdin: Readable & { isTTY?: boolean };
    stdout: PassThrough;
    stderr: PassThrough;
  }): Promise<number>;
}

/** One protocol run of `tool` with in-memory streams. */
export async function runInProcess(tool: Runnable, io: InProcessIo = {}): Promise<Outcome> {
  const collect = () => {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
  };
  const out = collect();
  const err = collect();
  let stdin: Readable & { isTTY?: boolean };
  if (io.stdin === 'tty') {
    stdin = Object.assign(new Readable({ read() {} }), { isTTY: true });
  } else {
    stdin = Readable.from(io.stdin === undefined ? [] : [Buffer.from(io.stdin)]);
  }
  const code = await tool.runWith({ argv: io.argv ?? [], env: io.env ?? {}, cwd: io.cwd ?? scratchDir(), stdin, stdout: out.stream, stderr: err.stream });
  await new Promise((resolve) => setImmediate(resolve));
  return { code, stdout: out.text(), stderr: err.text() };
}

const KIND_BY_EXIT: Record<number, [type: string, stages: string[]]> = {
  2: ['validation_error', ['input']],
  3: ['validation_error', ['output']],
  4: ['protocol_error', ['transport', 'describe']],
  5: ['execution_error', ['biz']],
};

/** A line of a JavaScript stack trace. */
export const STACK_LINE = /\n\s+at [^\n]*[(:]/;

/**
 * The contract of every run in JSON error mode without debug: exit 0 with the result (JSON,
 * or the text of a brief/help/version request) on stdout and nothing on stderr, or a
 * protocol exit code, nothing on stdout and exactly one error object on stderr.
 * Returns the parsed result or error object.
 */
export function expectProtocolOutcome(r: Outcome | Finished, options: { textOk?: (stdout: string) => boolean; quietStderr?: boolean } = {}): { ok: true; value: unknown } | { ok: false; error: Record<string, any> } {
  expect(r.stderr).not.toMatch(STACK_LINE);
  if (r.code === 0) {
    if (options.quietStderr !== false) expect(r.stderr).toBe('');
    if (options.textOk?.(r.stdout)) return { ok: true, value: r.stdout };
    if (r.stdout === '') return { ok: true, value: undefined }; // file mode
    expect(r.stdout.endsWith('\n')).toBe(true);
    return { ok: true, value: JSON.parse(r.stdout) };
  }
  expect(Object.keys(KIND_BY_EXIT).map(Number)).toContain(r.code);
  expect(r.stdout).toBe('');
  const lines = r.stderr.split('\n');
  expect(lines.length, r.stderr).toBe(2);
  expect(lines[1]).toBe('');
  const parsed = JSON.parse(lines[0]!);
  expect(Object.keys(parsed)).toEqual(['error']);
  const error = parsed.error;
  const [type, stages] = KIND_BY_EXIT[r.code!]!;
  expect(error.type).toBe(type);
  expect(stages).toContain(error.stage);
  expect(Object.keys(error).slice(0, 5)).toEqual(['type', 'source', 'stage', 'message', type === 'validation_error' ? 'errors' : 'exception']);
  expect(error).not.toHaveProperty('traceback');
  return { ok: false, error };
}

/** Spawn with the extra options the support helper does not offer (uid, stdio), collecting output. */
export function spawnCollect(argv: string[], options: SpawnOptions & { input?: string | Buffer; timeoutMs?: number } = {}): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...options.env };
    for (const key of ['TWYLT_DEBUG', 'TOOLSPEC_DEBUG', 'TWYLT_ERROR_FORMAT', 'TOOLSPEC_ERROR_FORMAT', 'INPUT_DESCRIBE', 'NODE_OPTIONS']) {
      if (!options.env || !(key in options.env)) delete env[key];
    }
    const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], ...options, env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    if (child.stdin) {
      child.stdin.on('error', () => {});
      child.stdin.end(options.input ?? '');
    }
  });
}
