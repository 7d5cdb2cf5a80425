/**
 * The scan's launcher (ADR 0035): `node launch.js TOOL_FILE [ARGS...]` runs a JavaScript or
 * TypeScript tool of a pack as runToolFile does (it describes itself while its packages are
 * missing), with what a pack from elsewhere needs and cannot carry:
 *
 * - the packages of an installed environment (NODE_PATH) and twylt itself resolvable by ES
 *   module imports (resolve.ts, through Node's module hooks; Bun reads NODE_PATH itself);
 * - a .ts file on a Node that cannot strip types run through tsx (typescript.ts), as an ES
 *   module when it imports or exports and no package.json "type" decides (typescript-format.ts).
 *
 * The tool sees the process as if it had been started directly: process.argv[1] is its file.
 */
import module from 'node:module';
import { resolve } from 'node:path';
import { resolveData, resolveSync } from './resolve.js';
import { runToolFile } from './run-tool-file.js';
import { findTsx, isTypeScript, runsTypeScript } from './typescript.js';

const file = process.argv[2];
if (file === undefined || file === '') {
  process.stderr.write('twylt launch: usage: launch.js TOOL_FILE [ARGS...]\n');
  process.exitCode = 2;
} else {
  const toolFile = resolve(file);
  process.argv.splice(1, 2, toolFile);
  // None: loading the tool fails with Node's own error, which runToolFile reports as usual.
  const tsx = isTypeScript(toolFile) && !runsTypeScript() ? findTsx(toolFile) : undefined;
  registerResolution(tsx !== undefined);
  if (tsx !== undefined) ((await import(tsx)) as { register: () => void }).register();
  await runToolFile(toolFile);
}

/** `typeScriptModules`: tsx runs TypeScript, and needs telling which `.ts` files without a package `"type"` are ES modules. */
function registerResolution(typeScriptModules: boolean): void {
  if ((process.versions as { bun?: string }).bun !== undefined) return; // Bun resolves NODE_PATH for imports itself
  const data = resolveData(process.env.NODE_PATH, import.meta.url, typeScriptModules);
  const hooks = module as typeof module & { registerHooks?: (hooks: { resolve: ReturnType<typeof resolveSync> }) => void };
  // In-thread and cheap where it exists (Node 22.15+); else Node's hooks thread.
  if (typeof hooks.registerHooks === 'function') hooks.registerHooks({ resolve: resolveSync(data) });
  else module.register(new URL('./resolve-hooks.js', import.meta.url), { data });
}
