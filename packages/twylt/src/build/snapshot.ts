/**
 * The start of an executable (`twylt build --executable`, or `--snapshot-blob`): the code a
 * V8 startup snapshot is made of. While the snapshot is built, the tool module is evaluated
 * (its schema library and its schemas with it) with its `run()` held, and whatever a
 * snapshot cannot carry fails the build, named: a pending timer or request, an open handle
 * or file descriptor, a native addon, a module loaded from disk. When the binary starts,
 * V8 deserialises that heap and Node calls the main function set here, which answers
 * describe from the embedded json_spec or starts the held run (entry.ts's `runBuilt`).
 */
import { readdirSync, readlinkSync } from 'node:fs';
// Loaded with this module, before the tool's is evaluated: in Node's snapshot builder, the
// first load of node:module opens /dev/null, which the descriptor check would pin on the tool.
import * as nodeModule from 'node:module';
import { resolve } from 'node:path';
import { startupSnapshot } from 'node:v8';
import { DESCRIBE_MODES } from '../protocol/constants.js';
import { describeSpecText } from '../tool/describe.js';
import { holdRuns, type JsonSpec } from '../tool/hooks.js';
import { runBuilt } from './entry.js';
import { REFUSED } from './refusal.js';

/** Node's own handles on stdio are no state of the tool's; Node takes care of them. */
const STDIO_HANDLES = new Set(['PipeWrap', 'TTYWrap']);

/**
 * Called by the snapshot's entry script with the require Node gives it (builtins only) and
 * a function that evaluates the bundled tool module with a require of its own.
 */
export function snapshotTool(spec: JsonSpec, builtinRequire: NodeRequire, evaluate: (require: NodeRequire) => void): void {
  const descriptors = openDescriptors();
  const dlopen = process.dlopen;
  process.dlopen = (_module: object, filename: string) => {
    throw new Error(`Cannot load the native addon ${filename}: a startup snapshot cannot hold one`);
  };
  const endHold = holdRuns();
  try {
    evaluate(requireOf(builtinRequire));
  } catch (error) {
    refuse(`its module failed while the snapshot was built: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    process.dlopen = dlopen;
  }
  const runs = endHold();
  if (runs.length !== 1) refuse(`its module called run() ${runs.length} times while it was evaluated; an executable needs exactly one call at the top level (MyTool.run())`);
  const run = runs[0]!;
  checkNothingPending(descriptors);
  // The call path compiled now is bytecode in the snapshot, not work on every call.
  for (const mode of DESCRIBE_MODES) describeSpecText(spec, mode);
  void run.warmUp().then(() => {
    // Promise callbacks the module queued have run by then, and whatever they started shows.
    setImmediate(() => checkNothingPending(descriptors));
    startupSnapshot.setDeserializeMainFunction(() => {
      restoreArgv();
      void runBuilt(spec, run.start);
    });
  });
}

/**
 * The tool bundle's `require`: Node's own modules, nothing from disk (esbuild left only
 * requires it could not resolve). Thrown while the module is evaluated, the error refuses
 * the build; thrown when biz runs, it fails the call. A tool that catches it goes on
 * without the module, in the snapshot as in the binary.
 */
function requireOf(builtinRequire: NodeRequire): NodeRequire {
  const tool = ((id: string) => {
    const builtin = builtinOf(id, builtinRequire);
    if (builtin !== NOT_BUILTIN) return builtin;
    throw new Error(`Cannot load ${id.endsWith('.node') ? `the native addon ${id}` : `"${id}"`} from disk: a twylt executable holds its bundle and Node's own modules only`);
  }) as NodeRequire;
  return Object.assign(tool, { resolve: builtinRequire.resolve, cache: builtinRequire.cache, main: undefined });
}

const NOT_BUILTIN = Symbol('not a built-in');

/**
 * Node's own module `id`, named with `node:` or without (`require('process')`, as yaml
 * does: module.isBuiltin's rule). Asked of Node under its `node:` name, which never looks on
 * disk: in the snapshot builder, node:module's builtinModules and isBuiltin may not be there
 * to ask.
 */
function builtinOf(id: string, builtinRequire: NodeRequire): unknown {
  if (id.endsWith('.node') || id.startsWith('.') || id.startsWith('/')) return NOT_BUILTIN;
  if (typeof nodeModule.isBuiltin === 'function' && !nodeModule.isBuiltin(id)) return NOT_BUILTIN;
  try {
    return builtinRequire(id.startsWith('node:') ? id : `node:${id}`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_UNKNOWN_BUILTIN_MODULE' || code === 'MODULE_NOT_FOUND') return NOT_BUILTIN;
    throw error;
  }
}

function checkNothingPending(before: Map<string, string>): void {
  const pending = process.getActiveResourcesInfo().filter((kind) => !STDIO_HANDLES.has(kind));
  if (pending.length > 0) refuse(`its module left work running when it was evaluated (${[...new Set(pending)].join(', ')}): a startup snapshot is taken of a module that has finished; start timers, servers and I/O in biz`);
  const opened = [...openDescriptors()].filter(([fd, target]) => before.get(fd) !== target);
  if (opened.length > 0) refuse(`its module left file descriptors open (${opened.map(([fd, target]) => `${fd} -> ${target}`).join(', ')}): a startup snapshot cannot carry them; open files in biz`);
}

/**
 * This process's open file descriptors and what they point to (Linux; elsewhere none are
 * seen). The listing's own descriptor is closed by the time it is read, and drops out.
 */
function openDescriptors(): Map<string, string> {
  const open = new Map<string, string>();
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return open;
  }
  for (const fd of fds) {
    try {
      open.set(fd, readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // closed since
    }
  }
  return open;
}

/** Ends the snapshot build: the builder reads the line and fails with its reason. */
function refuse(reason: string): never {
  process.stderr.write(`${REFUSED} ${JSON.stringify(reason)}\n`);
  process.exit(1);
}

/**
 * Run from a blob (`node --snapshot-blob tool.blob args...`), argv has no script: the blob
 * takes that place, so that the tool's arguments start at argv[2] as everywhere else. A
 * single executable already has its own path there.
 */
function restoreArgv(): void {
  const at = process.execArgv.findIndex((arg) => arg === '--snapshot-blob' || arg.startsWith('--snapshot-blob='));
  if (at === -1) return;
  const arg = process.execArgv[at]!;
  const blob = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : process.execArgv[at + 1] ?? '';
  process.argv.splice(1, 0, resolve(blob));
}
