/**
 * TwyltClient: describe and call one TWYLT executable, in any language. Each method spawns
 * a fresh process; the client holds no state but the spec it may cache, so concurrent
 * calls are safe.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { constants, readFileSync } from 'node:fs';
import { open, rm, unlink, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DESCRIBE_ENV, DESCRIBE_KEY, FILE_INPUT, FILE_OUTPUT, PROTOCOL_EXIT_CODES, type DescribeMode } from '../protocol/constants.js';
import type { ErrorObject } from '../protocol/errors.js';
import { isRecord } from '../protocol/record.js';
import { decodeUtf8Strict } from '../protocol/utf8.js';
import { freshDirectoryIn, resolveCommand } from './command.js';
import { InvalidOutputError, OutputTooLargeError, SchemaMismatchError, SpawnError, ToolCrashError, ToolError, UnexpectedExitError, type ProcessOutput } from './errors.js';
import { hasJsonNumber, parseJson as parseJsonText, stringifyExact, type NumberFidelity } from './json.js';
import { DEFAULT_MAX_OUTPUT_BYTES, runProcess, type ProcessResult, type RunOptions } from './process.js';
import { killTool, type SpawnSandbox } from './spawn.js';
import type { DescribeResult, ToolSpec, Transport } from './types.js';
import { traced, validateChannel } from '../events/channels.js';

/**
 * Above this many bytes an `auto` call sends its input on stdin: Linux caps one argument at
 * 128 KiB, and other systems lower.
 */
export const MAX_ARGUMENT_BYTES = 100_000;

/** Defaults for every call of one client. */
export interface ClientOptions {
  /**
   * Where the tool is run from (default: the current directory). The file transport runs
   * it in its exchange directory instead, made inside this one; relative paths in the
   * command are resolved from here first.
   */
  cwd?: string;
  /** Added to the inherited environment; `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** Kill the tool after this long (default 30 000 ms). */
  timeoutMs?: number;
  /** Limit for stdout and for stderr, each (default 4 MiB). */
  maxOutputBytes?: number;
  /** A spec the caller cached earlier: `spec()` returns it without spawning. */
  spec?: ToolSpec;
  /**
   * Run every process of this tool in a sandbox (twylt/toolset's `prepareSandbox`); the tool
   * then gets `env`, not the consumer's environment (docs/sandbox.md).
   */
  sandbox?: SpawnSandbox;
}

/** Per-call settings; each overrides the client's default. */
export interface InvokeOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  maxOutputBytes?: number;
  signal?: AbortSignal;
}

export interface CallOptions extends InvokeOptions {
  /**
   * How the input reaches the tool. Default `auto`: `cli` (the JSON as the last argument),
   * or `stdin` when the input is larger than MAX_ARGUMENT_BYTES.
   */
  transport?: Transport | 'auto';
  /**
   * How exactly `output` keeps the tool's numbers (see `parseJson`). `value` (default): a
   * number is a JS number unless that would change its value (an integer beyond 2^53, say),
   * then a JsonNumber. `text`: also where JSON.stringify would write it differently (`1.0`).
   */
  numbers?: NumberFidelity;
  /**
   * File transport only: the directory for input.json/output.json, and the tool's working
   * directory. Default: a fresh `.twylt-call-*` directory inside `cwd` (so npx or
   * `node --import tsx` find the caller's project there; the OS temp dir when `cwd` is not
   * writable), removed afterwards. Calls naming the same directory run one after another.
   * input.json is created afresh (an entry of that name is replaced, never written
   * through) and output.json must be a regular file (a link is not followed).
   */
  fileDir?: string;
  /**
   * Check the input against the published inputSchema before spawning and/or the output
   * against the outputSchema after (uses `spec()`, so the spec is fetched once and cached).
   */
  validate?: boolean | { input?: boolean; output?: boolean };
  /**
   * Processes started ahead (twylt/toolset's warm pool): a `stdin` or `auto` call without
   * its own `cwd` or `env` takes one when one waits, and is a cold call otherwise.
   */
  warm?: WarmSource;
}

/** Processes of a client's command, cwd and environment, started ahead of the calls. */
export interface WarmSource {
  /**
   * A running process whose stdin has received `{`, the first byte of every input (so one
   * whose consumer dies reads malformed JSON, never an empty stdin); undefined when none waits.
   */
  take(): ChildProcessWithoutNullStreams | undefined;
}

export interface DescribeOptions extends InvokeOptions {
  /** `json` (default): `{"describe": mode}` as the CLI payload. `env`: INPUT_DESCRIBE. */
  via?: 'json' | 'env';
  /**
   * Default: plain JS numbers, as schema validators need them. `value` or `text` keeps
   * them exact (see CallOptions.numbers), for printing the answer again.
   */
  numbers?: NumberFidelity;
}

export interface CallResult<O = unknown> {
  /** The tool's result, parsed (see `numbers`). */
  output: O;
  /** The result exactly as the tool wrote it (stdout, or output.json). */
  text: string;
  /** What the tool wrote to stderr on success (usually nothing). */
  stderr: string;
  durationMs: number;
  transport: Transport;
}

export class TwyltClient {
  readonly command: readonly string[];
  readonly options: Readonly<ClientOptions>;
  #spec: Promise<ToolSpec> | undefined;

  constructor(command: readonly string[], options: ClientOptions = {}) {
    if (command.length === 0 || !command[0]) throw new TypeError('TwyltClient needs a command: a non-empty argv array');
    this.command = Object.freeze([...command]);
    this.options = Object.freeze({ ...options });
    if (options.spec) this.#spec = Promise.resolve(options.spec);
  }

  /** Run a describe mode. `brief` resolves to the text (without the final newline), the others to parsed JSON. */
  async describe<M extends DescribeMode>(mode: M, options: DescribeOptions = {}): Promise<DescribeResult<M>> {
    const env = options.via === 'env' ? { ...options.env, [DESCRIBE_ENV]: mode } : options.env;
    const args = options.via === 'env' ? [] : [JSON.stringify({ [DESCRIBE_KEY]: mode })];
    const result = await this.#run(args, { ...options, env });
    const output = this.#stdoutOf(result);
    if (mode === 'brief') return output.stdout.replace(/\n$/, '') as DescribeResult<M>;
    return parseJson(this.command, output, 'stdout', options.numbers) as DescribeResult<M>;
  }

  /**
   * The tool's `json_spec`, fetched once and shared by concurrent callers. A failed fetch is
   * not cached. `refresh` fetches again.
   */
  spec(options: InvokeOptions & { refresh?: boolean } = {}): Promise<ToolSpec> {
    if (!this.#spec || options.refresh) {
      const pending = this.describe('json_spec', options);
      this.#spec = pending;
      pending.catch(() => {
        if (this.#spec === pending) this.#spec = undefined;
      });
    }
    return this.#spec;
  }

  /** Run the tool on `input`. Resolves with the parsed output on exit 0; throws a TwyltClientError otherwise. */
  async call<O = unknown>(input: Record<string, unknown>, options: CallOptions = {}): Promise<CallResult<O>> {
    const check = typeof options.validate === 'object' ? options.validate : { input: options.validate, output: options.validate };
    const spec = check.input || check.output ? await this.spec(options) : undefined;
    if (spec && check.input) await this.#validate('input', spec.inputSchema, hasJsonNumber(input) ? JSON.parse(JSON.stringify(input)) : input);

    const payload = stringifyExact(input);
    const auto = options.transport === undefined || options.transport === 'auto';
    const cold = auto ? (Buffer.byteLength(payload) > MAX_ARGUMENT_BYTES ? 'stdin' : 'cli') : (options.transport as Transport);
    // A warm process serves `stdin` and `auto` calls made with the client's own cwd and
    // environment (it was started with them); it has the input's first byte already.
    const warmable = (auto || cold === 'stdin') && options.cwd === undefined && options.env === undefined && payload.startsWith('{');
    const warm = warmable ? options.warm?.take() : undefined;
    let result: ProcessResult | undefined;
    let text: string;
    if (warm) {
      // Killed as the call took it (ADR 0026): a cold start instead, never that death as the answer.
      if (dying(warm.pid)) killTool(warm);
      else {
        result = await this.#run([], { ...options, stdin: payload.slice(1), started: warm });
        // Gone before it took the input (it died as the call arrived): a cold start instead.
        if (result.stdinRefused) result = undefined;
      }
    }
    const transport = result ? 'stdin' : cold;
    if (transport === 'file') {
      ({ result, text } = await this.#callInFile(payload, options));
    } else {
      result ??= await this.#run(transport === 'cli' ? [payload] : [], { ...options, stdin: transport === 'stdin' ? payload : undefined });
      text = this.#stdoutOf(result).stdout;
    }
    const source = transport === 'file' ? 'output.json' : 'stdout';
    const output = parseJson(this.command, { stdout: text, stderr: result.stderr }, source, options.numbers ?? 'value');

    if (spec && check.output) {
      // A validator sees a JsonNumber as an object: check the nearest JS numbers instead.
      const plain = hasJsonNumber(output) ? JSON.parse(text) : output;
      await this.#validate('output', spec.outputSchema, plain, result);
    }
    return { output: output as O, text, stderr: result.stderr, durationMs: result.durationMs, transport };
  }

  /**
   * The tool runs in the exchange directory, as the protocol wants, but as typed where the
   * caller stands: the directory is made inside the caller's, and relative paths in the
   * command are resolved from there.
   */
  async #callInFile(payload: string, options: CallOptions): Promise<{ result: ProcessResult; text: string }> {
    const here = resolve(options.cwd ?? this.options.cwd ?? '.');
    const named = options.fileDir !== undefined;
    const dir = named ? resolve(options.fileDir!) : await freshDirectoryIn(here, '.twylt-call-');
    const command = resolveCommand(this.command, here);
    try {
      return await exclusive(dir, async () => {
        await unlink(join(dir, FILE_OUTPUT)).catch(() => {});
        await createInput(this.command, dir, payload);
        const result = await this.#run([], { ...options, cwd: dir }, command);
        const out = this.#expectSuccess(result);
        const limit = options.maxOutputBytes ?? this.options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
        const read = await readOutput(join(dir, FILE_OUTPUT), limit);
        if (read === TOO_LARGE) throw new OutputTooLargeError(this.command, FILE_OUTPUT, limit, out);
        if (typeof read !== 'string') throw new InvalidOutputError(this.command, 'output.json', read.refused, out);
        return { result, text: read };
      });
    } finally {
      if (!named) await rm(dir, { recursive: true, force: true });
    }
  }

  #run(args: string[], options: InvokeOptions & Pick<RunOptions, 'stdin' | 'started'>, command: readonly string[] = this.command): Promise<ProcessResult> {
    const defaults = this.options;
    const run: RunOptions = {
      cwd: options.cwd ?? defaults.cwd,
      env: { ...defaults.env, ...options.env },
      stdin: options.stdin,
      timeoutMs: options.timeoutMs ?? defaults.timeoutMs,
      maxOutputBytes: options.maxOutputBytes ?? defaults.maxOutputBytes,
      signal: options.signal,
      started: options.started,
      sandbox: defaults.sandbox,
    };
    return runProcess([...command, ...args], run);
  }

  /** What the tool printed on exit 0 (a result, a describe answer), as strict UTF-8. */
  #stdoutOf(result: ProcessResult): ProcessOutput {
    const output = this.#expectSuccess(result);
    if (!result.stdoutIsUtf8) throw new InvalidOutputError(this.command, 'stdout', NOT_UTF8, output);
    return output;
  }

  /** Exit 0, or the typed error for whatever happened instead. */
  #expectSuccess(result: ProcessResult): ProcessOutput {
    const output = { stdout: result.stdout, stderr: result.stderr };
    if (result.exitCode === 0) return output;
    if (result.exitCode === null) throw new ToolCrashError(this.command, result.signal ?? 'SIGKILL', output);
    if (!PROTOCOL_EXIT_CODES.includes(result.exitCode)) throw new UnexpectedExitError(this.command, result.exitCode, output);
    throw new ToolError(this.command, result.exitCode, output, parseErrorObject(result.stderr));
  }

  #validate(side: 'input' | 'output', schema: ToolSpec['inputSchema'], value: unknown, result?: ProcessResult): Promise<void> {
    return traced(validateChannel, () => ({ side }), async () => {
      const { schemaValidator } = await import('./schema-check.js');
      const issues = (await schemaValidator(schema))(value);
      if (issues.length > 0) throw new SchemaMismatchError(this.command, side, issues, side === 'output' ? value : undefined, result);
    });
  }
}

/**
 * A process that is exiting or has a kill pending (Linux: /proc). Its pipe may still take a
 * write while its threads are torn down, so the write alone cannot tell; this can, before any
 * input is sent, so no call ever runs twice. Elsewhere (or with /proc unreadable): false.
 */
function dying(pid: number | undefined): boolean {
  if (pid === undefined || process.platform !== 'linux') return false;
  let stat: string;
  let status: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // Reaped already: gone.
    return true;
  }
  // After the command name (which may hold spaces and parentheses): the state, and the flags 6 fields on.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (/^[ZXx]$/.test(fields[0] ?? '') || (Number(fields[6]) & PF_EXITING) !== 0) return true;
  return [...status.matchAll(/^(?:ShdPnd|SigPnd):\s*([0-9a-f]+)$/gm)].some(([, mask]) => (BigInt(`0x${mask}`) & FATAL_SIGNALS) !== 0n);
}

/** The kernel's flag of a task in do_exit. */
const PF_EXITING = 0x4;
/** SIGKILL (9) and SIGTERM (15) as bits of a pending-signal mask. */
const FATAL_SIGNALS = (1n << 8n) | (1n << 14n);

/** Shorthand for `new TwyltClient(command, options)`. */
export function createClient(command: readonly string[], options?: ClientOptions): TwyltClient {
  return new TwyltClient(command, options);
}

/**
 * The `{"error": {...}}` object of a JSON-mode failure: the last line of stderr that is JSON
 * with an `error` object holding a string `type` and `message`. Lines around it are skipped,
 * whatever they are (business code's logs, a guardrails incident line). Undefined when no
 * line holds one (human mode, a crash).
 */
export function parseErrorObject(stderr: string): ErrorObject | undefined {
  const lines = stderr.split('\n').filter((line) => line.trim() !== '');
  for (const line of lines.reverse()) {
    try {
      const parsed: unknown = JSON.parse(line);
      const error = (parsed as { error?: unknown } | null)?.error;
      if (isRecord(error) && typeof error.type === 'string' && typeof error.message === 'string') return error as unknown as ErrorObject;
    } catch {
      // not a JSON line
    }
  }
  return undefined;
}

function parseJson(command: readonly string[], output: ProcessOutput, source: 'stdout' | 'output.json', numbers?: NumberFidelity): unknown {
  try {
    return numbers ? parseJsonText(output.stdout, numbers) : JSON.parse(output.stdout);
  } catch (error) {
    const reason = output.stdout.trim() === '' ? 'it is empty' : (error as Error).message;
    throw new InvalidOutputError(command, source, reason, output);
  }
}

/** One file-mode call per directory at a time: input.json/output.json are shared names. */
const busy = new Map<string, Promise<unknown>>();
async function exclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
  const before = busy.get(key) ?? Promise.resolve();
  const mine = before.catch(() => {}).then(task);
  busy.set(key, mine);
  try {
    return await mine;
  } finally {
    if (busy.get(key) === mine) busy.delete(key);
  }
}

const NOT_UTF8 = 'it is not valid UTF-8';
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * input.json, created afresh: whatever entry has the name is removed first (a link, not its
 * target), and the new file is made exclusively, so a link put there meanwhile is refused
 * rather than written through.
 */
async function createInput(command: readonly string[], dir: string, payload: string): Promise<void> {
  const path = join(dir, FILE_INPUT);
  await unlink(path).catch(() => {});
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new SpawnError(`cannot use ${dir} for the file transport: ${FILE_INPUT} cannot be created there (${code})`, command, {}, { cause: error });
  }
  try {
    await handle.writeFile(payload);
  } finally {
    await handle.close();
  }
}

/**
 * output.json's text, or why it is refused: it must be a regular file, read without
 * following a link (non-blocking, so a FIFO cannot hold the call), within the output limit
 * (judged by its size, before it is read), and UTF-8.
 */
const TOO_LARGE = Symbol('too large');

async function readOutput(path: string, limit: number): Promise<string | { refused: string } | typeof TOO_LARGE> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | NO_FOLLOW | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { refused: 'the tool exited 0 but wrote no output.json' };
    if (code === 'ELOOP') return { refused: 'it is a symbolic link, which the client does not follow' };
    return { refused: `it cannot be opened (${code})` };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { refused: 'it is not a regular file' };
    if (stat.size > limit) return TOO_LARGE;
    return decodeUtf8Strict(await handle.readFile()) ?? { refused: NOT_UTF8 };
  } finally {
    await handle.close();
  }
}
