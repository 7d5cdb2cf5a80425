/**
 * One observed run of the tool under test, always in a fresh empty directory with stdin
 * closed and a clean protocol environment, so no check can see another's leftovers. The
 * directories are made where the suite says (runDirectory), by default inside the user's
 * own directory, so the command resolves what it needs as it does there.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freshDirectoryIn } from '../client/command.js';
import { runProcess } from '../client/process.js';
import type { SpawnSandbox } from '../client/spawn.js';
import { SpawnError, TwyltClientError } from '../client/errors.js';
import { DESCRIBE_ENV, ENV } from '../protocol/constants.js';
import type { Evidence } from './types.js';

export interface ProbeRequest {
  args?: string[];
  stdin?: string;
  env?: Record<string, string>;
  files?: Record<string, string>;
  /** Files to read back after the run. */
  read?: string[];
}

export interface ProbeSettings {
  command: readonly string[];
  timeoutMs: number;
  maxOutputBytes: number;
  tmpRoot: string;
  env: Record<string, string>;
  signal?: AbortSignal;
  /** Every run in this sandbox (docs/sandbox.md). */
  sandbox?: SpawnSandbox;
}

/** Variables of the caller that would change what the tool does; every run starts without them. */
const CLEARED = [DESCRIBE_ENV, ...ENV.errorFormat, ...ENV.debug];
const EVIDENCE_LIMIT = 4000;

export type Prober = (request: ProbeRequest) => Promise<Evidence>;

/** A probe function that runs at most `concurrency` tools at a time. */
export function createProber(settings: ProbeSettings, concurrency: number): Prober {
  const limit = limiter(concurrency);
  return (request) => limit(() => probe(settings, request));
}

async function probe(settings: ProbeSettings, request: ProbeRequest): Promise<Evidence> {
  const dir = await mkdtemp(join(settings.tmpRoot, 'twylt-check-'));
  const env: Record<string, string | undefined> = Object.fromEntries(CLEARED.map((name) => [name, undefined]));
  Object.assign(env, settings.env, request.env);
  const evidence: Evidence = {
    sent: { args: request.args ?? [] },
    received: { exitCode: null, signal: null, stdout: '', stderr: '' },
    durationMs: 0,
  };
  if (request.stdin !== undefined) evidence.sent.stdin = request.stdin;
  if (request.env) evidence.sent.env = request.env;
  if (request.files) evidence.sent.files = request.files;
  const started = performance.now();
  try {
    for (const [name, content] of Object.entries(request.files ?? {})) await writeFile(join(dir, name), content);
    try {
      const result = await runProcess([...settings.command, ...(request.args ?? [])], {
        cwd: dir,
        env,
        stdin: request.stdin,
        timeoutMs: settings.timeoutMs,
        maxOutputBytes: settings.maxOutputBytes,
        signal: settings.signal,
        sandbox: settings.sandbox,
      });
      Object.assign(evidence.received, { exitCode: result.exitCode, signal: result.signal, stdout: result.stdout, stderr: result.stderr });
    } catch (error) {
      if (!(error instanceof TwyltClientError)) throw error;
      Object.assign(evidence.received, { stdout: error.stdout, stderr: error.stderr, failure: error.message });
      if (error instanceof SpawnError) evidence.received.notStarted = true;
    }
    if (request.read) {
      const files: Record<string, string | null> = {};
      for (const name of request.read) files[name] = await readFile(join(dir, name), 'utf8').catch(() => null);
      evidence.received.files = files;
    }
  } finally {
    evidence.durationMs = Math.round(performance.now() - started);
    await rm(dir, { recursive: true, force: true });
  }
  return evidence;
}

/** Shorten long text for a report; checks always see the full text. */
export function trimEvidence(evidence: Evidence): Evidence {
  const cut = (text: string) => (text.length > EVIDENCE_LIMIT ? `${text.slice(0, EVIDENCE_LIMIT)}… (${text.length} chars)` : text);
  const received = { ...evidence.received, stdout: cut(evidence.received.stdout), stderr: cut(evidence.received.stderr) };
  return { ...evidence, received };
}

function limiter(concurrency: number) {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    // A finishing task hands its slot straight to the next waiter.
    if (active >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    else active++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

/**
 * The directory the runs' fresh directories go in. By default a new `.twylt-check-*` inside
 * `cwd` (removed by `remove`), so that a command that looks for its project from its
 * working directory (npx, `node --import tsx`, uv, a tsconfig.json) finds the user's; the
 * OS temp dir when `cwd` is not writable. An explicit `tmpRoot` is used as it is.
 */
export async function runDirectory(cwd: string, tmpRoot: string | undefined): Promise<{ directory: string; remove(): Promise<void> }> {
  if (tmpRoot !== undefined) return { directory: tmpRoot, remove: async () => {} };
  const directory = await freshDirectoryIn(cwd, '.twylt-check-');
  return { directory, remove: () => rm(directory, { recursive: true, force: true }) };
}
