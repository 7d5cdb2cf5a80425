/**
 * The JavaScript runtime this process runs on (Node.js, Bun or Deno) and the few things that
 * differ between them, in one place (ADR 0022): the rest of the code asks this module what
 * to do, never which runtime it is.
 */
import { closeSync, createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';

const versions = process.versions as NodeJS.ProcessVersions & { bun?: string; deno?: string };

type RuntimeName = 'Node.js' | 'Bun' | 'Deno';
const NAME: RuntimeName = versions.bun !== undefined ? 'Bun' : versions.deno !== undefined ? 'Deno' : 'Node.js';

/** "Node.js 22.23.5", "Bun 1.4.5", "Deno 2.9.6": the runtime, as messages name it. */
export const RUNTIME = `${NAME} ${NAME === 'Bun' ? versions.bun : NAME === 'Deno' ? versions.deno : versions.node}`;

/**
 * Whether a V8 code cache made here helps a built file (ADR 0008): it is made for `node`,
 * and only a Node of the same version takes it. Bun's (JavaScriptCore's) data is no V8
 * cache and tripled a built file; Deno's V8 is not Node's.
 */
export const MAKES_NODE_CODE_CACHE = NAME === 'Node.js';

/** argv that runs a JavaScript file on this same runtime (Deno runs a file with `run -A`). */
export function scriptCommand(file: string, args: readonly string[] = []): string[] {
  return NAME === 'Deno' ? [process.execPath, 'run', '-A', file, ...args] : [process.execPath, file, ...args];
}

/** argv that evaluates `code` on this same runtime. */
export function evalCommand(code: string): string[] {
  return [process.execPath, NAME === 'Deno' ? 'eval' : '-e', code];
}

/**
 * This process's arguments after the script, as typed. Bun drops a `--` that comes first
 * (`bun cli.js -- cmd` gives [cmd]); a command line that can only start with an option or
 * `--` (`startsWithOption`) gets it back when its first argument is neither.
 */
export function commandLineArguments(startsWithOption: boolean): string[] {
  const args = process.argv.slice(2);
  if (NAME === 'Bun' && startsWithOption && args.length > 0 && !args[0]!.startsWith('-')) return ['--', ...args];
  return args;
}

/** Spawn failures that are the consumer's (out of processes, memory, descriptors), not the spawned file's. */
const CONSUMER_FAULTS = new Set(['EAGAIN', 'ENOMEM', 'EMFILE', 'ENFILE']);

/**
 * Why a command could not be started, worded alike on every runtime: Node's own words
 * (`spawn FILE ENOENT`, `spawn E2BIG`); Bun and Deno word it their own way but set the
 * same error code, which gives Node's form.
 */
export function spawnFailure(error: NodeJS.ErrnoException, file: string): string {
  // A sandboxed spawn is of its launcher (bwrap, prlimit): the consumer out of processes,
  // memory or descriptors fails the call of `file`, and names it, as an unsandboxed spawn does.
  if (error.path !== file && CONSUMER_FAULTS.has(error.code ?? '') && error.message === `spawn ${error.path} ${error.code}`) return `spawn ${file} ${error.code}`;
  if (error.message.startsWith('spawn ') || typeof error.code !== 'string' || !/^E[A-Z0-9]+$/.test(error.code)) return error.message;
  return `spawn ${file} ${error.code}`;
}

/**
 * A FIFO's bytes as a stream that waits for its writer without holding a thread, so that a
 * SIGTERM handler still ends the process. `fd` is the FIFO opened with O_NONBLOCK; the
 * stream owns it. Node reads it as a pipe (epoll; a blocking open would keep process.exit
 * waiting on the thread pool); Bun's and Deno's sockets do not take a FIFO, but their exit
 * does not wait for a read in flight, so a plain file stream there.
 */
export async function fifoStream(fd: number, path: string): Promise<Readable> {
  if (NAME === 'Node.js') {
    // Loaded only here (a FIFO is rare); not import() where it can be avoided: built files
    // run the tool as a vm.Script, which has no dynamic import.
    const { Socket } = process.getBuiltinModule?.('node:net') ?? (await import('node:net'));
    return new Socket({ fd, readable: true, writable: false });
  }
  closeSync(fd);
  return createReadStream(path);
}
