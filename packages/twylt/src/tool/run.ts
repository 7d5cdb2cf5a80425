/**
 * The run loop: one protocol run of a tool from argv, environment and stdio to an exit
 * code. All I/O comes in through `RunIo`, so tests can drive it in-process.
 */
import type { Writable } from 'node:stream';
import { DEFAULTS, DESCRIBE_KEY, EXIT, type ErrorFormat } from '../protocol/constants.js';
import { Fault, KINDS, TwyltError } from '../protocol/errors.js';
import { formatResult, renderErrorHuman, renderErrorJson } from '../protocol/render.js';
import { forgetGuardrails, guardrailsRequested } from '../guardrails/requested.js';
import type { RunGuardrails } from '../guardrails/run-hooks.js';
import { callBiz } from './biz.js';
import { contractsOf, type Contracts } from './contracts.js';
import type { ToolDefinition } from './definition.js';
import { describeRequest, describeText } from './describe.js';
import { launcherTurn } from './hooks.js';
import { scanOptions, serviceOption, type ScannedOptions } from './options.js';
import { isCliPayload, processStdin, readInputFile, readRequest, removeOutputFile, writeOutputFile, type JsonObject, type Stdin } from './transport.js';

export interface RunIo {
  /** The tool's own arguments (without node and the script). */
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdin: Stdin;
  stdout: Writable;
  stderr: Writable;
}

/** The I/O objects made by processIo: their stdin is this process's own fd 0. */
const ownIo = new WeakSet<RunIo>();

export function processIo(): RunIo {
  const io: RunIo = {
    argv: process.argv.slice(2),
    env: process.env,
    cwd: process.cwd(),
    // Opening process.stdin costs a stream set-up; a CLI payload never needs it.
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
  };
  ownIo.add(io);
  return io;
}

/** Runs the protocol once and resolves to the exit code; never rejects. */
export async function runTool(tool: ToolDefinition, io: RunIo): Promise<number> {
  const options = scanOptions(io.argv, io.env);
  const format = options.errorFormat;
  try {
    if (options.invalid) throw new TwyltError('transport', { cause: options.invalid });
    const service = serviceOption(options.rest[0]);
    if (service) {
      const name = tool.name ?? DEFAULTS.name;
      const version = tool.version ?? DEFAULTS.version;
      const text = service === 'help' ? (await import('./help.js')).helpText(tool) : service === 'version' ? `${name} ${version}\n` : `${version}\n`;
      await write(io.stdout, text);
      return EXIT.ok;
    }

    // Input still to come (stdin, a file): build the contracts while it is awaited. A warm
    // process (ADR 0026) waits long for it; a cold one does the same work as before.
    const early = isCliPayload(options.rest[0]) ? undefined : contractsOf(tool);
    early?.catch(() => {}); // reported by execute, if a call needs them
    // A launcher that imported this tool ahead of its input decides once the input is read.
    const turn = await launcherTurn();
    if (turn && !turn.go) return turn.code;
    const request = await readRequest(options.rest, ownIo.has(io) ? processStdin : () => io.stdin, options.maxInputBytes);
    const mode = describeRequest(request, io.env);
    if (mode) {
      await write(io.stdout, await describeText(tool, mode));
      return EXIT.ok;
    }

    const guardrails = await startGuardrails(tool, io, request ? request.source : 'file');
    if (request) {
      const result = await execute(tool, withoutEmptyDescribe(request.payload), io, options, guardrails, early);
      // Two writes, not `${result}\n`: concatenating would copy a result of tens of MB once more.
      await write(io.stdout, result);
      await write(io.stdout, '\n');
      return EXIT.ok;
    }

    await guardrails?.beforeRemoveOutput();
    await removeOutputFile(io.cwd);
    await guardrails?.beforeReadInput();
    const input = await readInputFile(io.cwd, options.maxInputBytes);
    const result = await execute(tool, input, io, options, guardrails, early);
    await guardrails?.beforeWriteOutput();
    await writeOutputFile(io.cwd, result);
    return EXIT.ok;
  } catch (error) {
    return report(error, format, options.debug, io.stderr);
  }
}

/** Validate, run biz, validate: resolves to the result's JSON text. */
async function execute(tool: ToolDefinition, input: unknown, io: RunIo, options: ScannedOptions, guardrails: RunGuardrails | null, early?: Promise<Contracts>): Promise<string> {
  // Both contracts before biz: a refused output schema must not let biz run first.
  const contracts = await (early ?? contractsOf(tool));
  const checkedInput = await contracts.input.validate(input);
  if (!checkedInput.ok) throw new TwyltError('inputInvalid', { issues: checkedInput.issues });

  if (io.stdout === process.stdout) keepStdoutForResults();
  let output: unknown;
  try {
    output = await callBiz((value) => tool.biz(value), checkedInput.value, (code) => {
      // The process is exiting under biz's feet: report synchronously (stdio to pipes and
      // files is synchronous on POSIX) and replace the code biz chose.
      const cause = new Fault('ProcessExit', `biz called process.exit(${code}) instead of returning a result`);
      const failure = renderFailure(new TwyltError('execution', { cause }), options.errorFormat, options.debug);
      io.stderr.write(failure.text);
      process.exitCode = failure.code;
    });
  } catch (error) {
    if (error instanceof TwyltError && KINDS[error.kind].type === 'guardrails_error') throw error;
    // Under guardrails, the host's workspace root must not leak through business errors.
    throw new TwyltError('execution', { cause: guardrails ? guardrails.redactError(error) : error });
  }

  const checkedOutput = await contracts.output.validate(output);
  if (!checkedOutput.ok) throw new TwyltError('outputInvalid', { issues: checkedOutput.issues });
  try {
    return formatResult(checkedOutput.value);
  } catch (error) {
    throw new TwyltError('execution', { cause: new Fault('UnserializableOutput', `The result cannot be written as JSON: ${(error as Error).message}`) });
  }
}

/**
 * The validation path run once on the tool's own few-shot examples, results discarded, so
 * that a startup snapshot (`twylt build --executable`) holds it compiled and its modules
 * loaded. biz is never called; a failure here changes nothing.
 */
export async function warmUp(tool: ToolDefinition): Promise<void> {
  try {
    const { input, output } = await contractsOf(tool);
    for (const shot of tool.fewShots ?? []) {
      await input.validate(shot.input);
      const checked = await output.validate(shot.output);
      if (checked.ok) formatResult(checked.value);
    }
  } catch {
    // An example the schemas refuse, or a refinement that throws: the call will say so.
  }
}

async function startGuardrails(tool: ToolDefinition, io: RunIo, transport: 'cli' | 'stdin' | 'file'): Promise<RunGuardrails | null> {
  if (!guardrailsRequested(io.env)) {
    forgetGuardrails();
    return null;
  }
  const { startGuardrails: start } = await import('../guardrails/run-hooks.js');
  return start({ env: io.env, toolName: tool.name ?? DEFAULTS.name, cwd: io.cwd, stderr: io.stderr, transport });
}

/** A null or empty `describe` is no describe request; it is dropped before validation. */
function withoutEmptyDescribe(payload: JsonObject): JsonObject {
  if (!Object.hasOwn(payload, DESCRIBE_KEY)) return payload;
  const { [DESCRIBE_KEY]: _dropped, ...rest } = payload;
  return rest;
}

/** The one place where a failure becomes text on stderr and an exit code. */
async function report(error: unknown, format: ErrorFormat, debug: boolean, stderr: Writable): Promise<number> {
  const failure = renderFailure(error, format, debug);
  await write(stderr, failure.text);
  return failure.code;
}

function renderFailure(error: unknown, format: ErrorFormat, debug: boolean): { text: string; code: number } {
  const failure = error instanceof TwyltError ? error : new TwyltError('execution', { cause: error });
  const object = failure.toObject(debug);
  const render = format === 'human' ? renderErrorHuman : renderErrorJson;
  try {
    return { text: render(object), code: failure.exitCode };
  } catch {
    // An issue value that cannot even be walked (a hostile proxy): report the issues without values.
    if (object.errors) object.errors = object.errors.map(({ path, code, message }) => ({ path, code, message }));
    return { text: render(object), code: failure.exitCode };
  }
}

/** The real `process.stdout.write`, kept once business code may have had stdout taken away. */
let realStdoutWrite: Writable['write'] | undefined;

/**
 * From the moment business code runs, whatever it prints to stdout (console.log included)
 * goes to stderr, for the rest of the process: stdout carries the result and nothing else.
 */
function keepStdoutForResults(): void {
  if (realStdoutWrite) return;
  realStdoutWrite = process.stdout.write.bind(process.stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  // Bun's and Deno's console writes to fd 1 without process.stdout.write: the console methods
  // that print to stdout print through a console on stderr, on every runtime alike.
  const { Console } = process.getBuiltinModule?.('node:console') ?? {};
  if (Console === undefined) return;
  const onStderr = new Console({ stdout: process.stderr, stderr: process.stderr });
  for (const method of CONSOLE_STDOUT_METHODS) (console as any)[method] = onStderr[method].bind(onStderr);
}

/** The console methods that print to stdout (the others print to stderr already). */
const CONSOLE_STDOUT_METHODS = ['log', 'info', 'debug', 'dir', 'dirxml', 'table', 'group', 'groupCollapsed', 'groupEnd', 'count', 'countReset', 'time', 'timeEnd', 'timeLog'] as const;

/** Resolves once the text has been handed to the OS, or the stream has failed. */
function write(stream: Writable, text: string): Promise<void> {
  const send = stream === process.stdout && realStdoutWrite ? realStdoutWrite : stream.write.bind(stream);
  return new Promise((resolve) => {
    send(text, () => resolve());
  });
}
