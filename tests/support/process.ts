/** Spawning real executables in tests: the one helper every subprocess test uses. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { JS_RUNTIME, TS_RUNTIME } from './runtimes.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface SpawnOptions {
  /** Bytes for stdin; stdin is closed either way (an empty stdin when absent). */
  input?: string | Buffer;
  env?: Record<string, string | undefined>;
  /** Replace the environment entirely instead of adding to it. */
  cleanEnv?: boolean;
  cwd?: string;
  timeoutMs?: number;
}

/** Runs argv to completion (no shell) and collects its output. */
export function run(argv: readonly string[], options: SpawnOptions = {}): Promise<Finished> {
  const base = options.cleanEnv ? { PATH: process.env.PATH } : process.env;
  const env: NodeJS.ProcessEnv = { ...base };
  // The runner's own debug switches must not leak into the tools under test.
  for (const key of ['TWYLT_DEBUG', 'TOOLSPEC_DEBUG', 'TWYLT_ERROR_FORMAT', 'TOOLSPEC_ERROR_FORMAT', 'INPUT_DESCRIBE', 'NODE_OPTIONS']) {
    if (!options.env || !(key in options.env)) delete env[key];
  }
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: options.cwd ?? ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.on('error', () => {}); // the tool may exit before reading stdin
    child.stdin.end(options.input ?? '');
  });
}

/** The compiled example (built by `npm run build`), run on the runtime under test (support/runtimes.ts). */
export function example(name: string): string[] {
  if (testBuilt()) return builtSingle('examples', name);
  const compiled = `${ROOT}build/examples/${name}/tool.js`;
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run npm run build first`);
  return [...JS_RUNTIME, compiled];
}

/** The example's TypeScript source: through tsx on Node 20, natively on the other runtimes. */
export function exampleSource(name: string): string[] {
  return [...TS_RUNTIME, `${ROOT}examples/${name}/tool.ts`];
}

/** Parses the single JSON error line a JSON-mode failure writes to stderr. */
export function errorOf(result: Finished): Record<string, any> {
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  if (lines.length !== 1) throw new Error(`expected one stderr line, got ${lines.length}:\n${result.stderr}`);
  return JSON.parse(lines[0]!).error;
}

/** A compiled runtime fixture (tests/fixtures/runtime/<name>.ts). */
export function fixture(name: string): string[] {
  if (testBuilt()) return builtSingle('fixtures', name);
  const compiled = `${ROOT}build/tests/fixtures/runtime/${name}.js`;
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run npm run build first`);
  return [...JS_RUNTIME, compiled];
}

/**
 * With TWYLT_TEST_BUILT=1, example() and fixture() give the single files that `twylt build`
 * made of them, so the same subprocess suites run against built tools (tests/build/ does so);
 * with TWYLT_TEST_EXECUTABLES=<dir>, the executables `twylt build --executable` made there.
 */
export function testBuilt(): boolean {
  return process.env.TWYLT_TEST_BUILT === '1' || process.env.TWYLT_TEST_EXECUTABLES !== undefined;
}

/** Where tests/build/ writes the single file of an example or a runtime fixture. */
export function singleFile(kind: 'examples' | 'fixtures', name: string): string {
  return `${ROOT}build/single/${kind}/${name}.mjs`;
}

/** Where tests/build/ writes the executable of an example or a runtime fixture, under `dir`. */
export function executableFile(dir: string, kind: 'examples' | 'fixtures', name: string): string {
  return `${dir}/${kind}/${name}`;
}

function builtSingle(kind: 'examples' | 'fixtures', name: string): string[] {
  const executables = process.env.TWYLT_TEST_EXECUTABLES;
  if (executables !== undefined) {
    const file = executableFile(executables, kind, name);
    if (!existsSync(file)) throw new Error(`${file} is missing: tests/build/runtime-executable.test.ts builds it`);
    return [file];
  }
  const file = singleFile(kind, name);
  if (!existsSync(file)) throw new Error(`${file} is missing: run npx vitest run tests/build first`);
  return [...JS_RUNTIME, file];
}
