/**
 * The launcher: runs a tool file, answering the describe requests that must work before the
 * tool's dependencies are installed (docs/TWYLT.md section 6).
 *
 * - `requirements`: read statically from the source; the tool is not imported.
 * - `json_spec`: the tool is imported and answers; if a module it needs is missing, the
 *   static metadata is printed with `{}` schemas.
 * - anything else: the tool is imported and runs as usual.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { Fault, TwyltError } from '../protocol/errors.js';
import { formatJson, renderErrorHuman, renderErrorJson } from '../protocol/render.js';
import { handOverRequest, replayStdin } from '../tool/hooks.js';
import { processStdin, readStdin } from '../tool/stdin.js';
import { defaultRequirements, markToolEntryFile } from './default-requirements.js';
import { readToolMetadata, type StaticMetadata } from './extract.js';
import { readRequest, type Request } from './request.js';
import { staticJsonSpec, staticRequirements } from './static-spec.js';

/**
 * Runs the tool in `file` (a file URL or a path, e.g. `new URL('./tool.ts', import.meta.url)`)
 * for this process's argv, environment and stdio. Resolves once the launcher's part is done;
 * a tool that runs ends the process itself. Rejects only when the tool fails to load outside
 * a describe request, with the loader's own error, so it surfaces as it would natively.
 */
export async function runToolFile(file: string | URL): Promise<void> {
  const toolFile = toPath(file);
  const request = await readRequest(process.argv.slice(2), process.env, { read: (limit) => readStdin(processStdin, limit) });
  markToolEntryFile(toolFile);
  // The tool's run takes the payload as parsed here, or else reads the same stdin again.
  if (request.payload) handOverRequest(request.payload);
  else if (request.stdin) replayStdin(request.stdin);

  try {
    if (request.mode === 'requirements') await answerRequirements(toolFile, request);
    else if (request.mode === 'json_spec') await answerJsonSpec(toolFile, request);
    else await importTool(toolFile);
  } catch (error) {
    if (!(error instanceof TwyltError)) throw error;
    const object = error.toObject(request.debug);
    process.stderr.write(request.errorFormat === 'human' ? renderErrorHuman(object) : renderErrorJson(object));
    process.exitCode = error.exitCode;
  }
}

async function answerRequirements(toolFile: string, request: Request): Promise<void> {
  const metadata = await staticMetadata(toolFile);
  const requirements = staticRequirements(metadata, toolFile);
  debugNotes(metadata, request);
  if (requirements) return print(requirements);
  // The source does not show the tool's answer: ask the tool, if it can be loaded.
  if (await loadForDescribe(toolFile)) return;
  print(defaultRequirements(toolFile));
}

async function answerJsonSpec(toolFile: string, request: Request): Promise<void> {
  if (await loadForDescribe(toolFile)) return;
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
