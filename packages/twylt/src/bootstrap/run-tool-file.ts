/**
 * The launcher: runs a tool file, answering the describe requests that must work before the
 * tool's dependencies are installed (docs/TWYLT.md section 6).
 *
 * - `requirements`: read statically from the source; the tool is not imported to answer it.
 * - `json_spec`: the tool is imported and answers; if a module it needs is missing, the
 *   static metadata is printed with `{}` schemas.
 * - anything else: the tool is imported and runs as usual.
 *
 * When the input is still to come (stdin), the tool is imported while it arrives and its run
 * waits for the launcher's word (ADR 0035): a warm process has it loaded before its call.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { Fault, TwyltError } from '../protocol/errors.js';
import { formatJson, renderErrorHuman, renderErrorJson } from '../protocol/render.js';
import { handOverRequest, holdUntilRequest, replayStdin, type LauncherTurn } from '../tool/hooks.js';
import { processStdin, readStdin } from '../tool/stdin.js';
import { defaultRequirements, markToolEntryFile, toolEntryFile } from '../requirements/default-requirements.js';
import { readToolMetadata, type StaticMetadata } from './extract.js';
import { inputToCome, readRequest, type Request } from './request.js';
import { staticJsonSpec, staticRequirements } from './static-spec.js';

/** Whether the tool loaded (and answers a describe itself), or a module it needs is missing. Other failures throw. */
type Load = () => Promise<boolean>;

const ACTIVE = Symbol.for('twylt.launcherActive');

/**
 * Runs the tool in `file` (a file URL or a path, e.g. `new URL('./tool.ts', import.meta.url)`)
 * for this process's argv, environment and stdio. Resolves once the launcher's part is done;
 * a tool that runs ends the process itself. Rejects only when the tool fails to load outside
 * a describe request, with the loader's own error, so it surfaces as it would natively.
 */
export async function runToolFile(file: string | URL): Promise<void> {
  const slots = globalThis as { [ACTIVE]?: true };
  markToolEntryFile(toPath(file));
  // A launcher file run by another launcher (the scan's): the outer one reads the request.
  if (slots[ACTIVE]) return void (await importTool(toPath(file)));
  slots[ACTIVE] = true;

  const argv = process.argv.slice(2);
  const ahead = inputToCome(argv, process.env) ? importAhead(toPath(file)) : undefined;
  const request = await readRequest(argv, process.env, { read: (limit) => readStdin(processStdin, limit) });
  // The tool's run takes the payload as parsed here, or else reads the same stdin again.
  if (request.payload) handOverRequest(request.payload);
  else if (request.stdin) replayStdin(request.stdin);
  const load: Load = ahead ? () => ahead.load() : () => loadForDescribe(toolEntryFile()!);

  try {
    if (request.mode === 'requirements') await answerRequirements(request, load);
    else if (request.mode === 'json_spec') await answerJsonSpec(request, load);
    else if (ahead) await ahead.run();
    else await importTool(toolEntryFile()!);
  } catch (error) {
    if (!(error instanceof TwyltError)) throw error;
    const object = error.toObject(request.debug);
    process.stderr.write(request.errorFormat === 'human' ? renderErrorHuman(object) : renderErrorJson(object));
    process.exitCode = error.exitCode;
  } finally {
    // Answered here: a tool that loaded and waits ends with the launcher's exit code.
    ahead?.release({ go: false, code: typeof process.exitCode === 'number' ? process.exitCode : 0 });
  }
}

/**
 * The tool imported now, its run held until the launcher decides: `load` for a describe
 * (true: it loaded and answers), `run` for a call (the load error, if any, as Node's own).
 */
function importAhead(toolFile: string) {
  let reached!: () => void;
  const waiting = new Promise<void>((done) => (reached = done));
  const release = holdUntilRequest(reached);
  const imported = importTool(toolFile).then(
    () => ({ error: undefined }),
    (error: unknown) => ({ error: error ?? new Error('the tool failed to load') }),
  );
  // The module's top level either ends or starts its run (which may be awaited there).
  const settled = Promise.race([imported, waiting.then(() => ({ error: undefined }))]);
  let decided = false;
  const decide = (turn: LauncherTurn) => {
    if (decided) return;
    decided = true;
    release(turn);
  };
  return {
    async load(): Promise<boolean> {
      const { error } = await settled;
      if (error === undefined) {
        decide({ go: true });
        return true;
      }
      if (isMissingModule(error)) return false;
      throw new TwyltError('describe', { cause: error });
    },
    async run(): Promise<void> {
      const { error } = await settled;
      if (error !== undefined) throw error;
      decide({ go: true });
    },
    release: decide,
  };
}

async function answerRequirements(request: Request, load: Load): Promise<void> {
  const toolFile = toolEntryFile()!;
  const metadata = await staticMetadata(toolFile);
  const requirements = staticRequirements(metadata, toolFile);
  debugNotes(metadata, request);
  if (requirements) return print(requirements);
  // The source does not show the tool's answer: ask the tool, if it can be loaded.
  if (await load()) return;
  print(defaultRequirements(toolFile));
}

async function answerJsonSpec(request: Request, load: Load): Promise<void> {
  if (await load()) return;
  const toolFile = toolEntryFile()!;
  const metadata = await staticMetadata(toolFile);
  const spec = staticJsonSpec(metadata, toolFile);
  debugNotes(metadata, request);
  print(spec);
}

/**
 * Imports the tool, which answers the describe request itself: true. False when a module
 * it needs is missing (nothing of it has run then). Any other failure is a describe error.
 */
async function loadForDescribe(toolFile: string): Promise<boolean> {
  try {
    await importTool(toolFile);
    return true;
  } catch (error) {
    if (isMissingModule(error)) return false;
    throw new TwyltError('describe', { cause: error });
  }
}

function importTool(toolFile: string): Promise<unknown> {
  return import(pathToFileURL(toolFile).href);
}

/** Node's code for an unresolvable import (ESM) or require (CommonJS), at any depth. */
function isMissingModule(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

async function staticMetadata(toolFile: string): Promise<StaticMetadata> {
  try {
    return await readToolMetadata(toolFile);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new TwyltError('describe', { cause: new Fault('ToolFileUnreadable', `Cannot read the tool file ${toolFile}: ${code}`) });
  }
}

function debugNotes(metadata: StaticMetadata, request: Request): void {
  if (!request.debug) return;
  for (const note of metadata.notes) process.stderr.write(`twylt bootstrap: ${note}\n`);
}

function print(value: unknown): void {
  process.stdout.write(`${formatJson(value)}\n`);
}

function toPath(file: string | URL): string {
  if (file instanceof URL || file.startsWith('file:')) return fileURLToPath(file);
  return resolve(file);
}
