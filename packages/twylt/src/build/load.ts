/**
 * How a built single file evaluates its tool. The tool's bundle is a string in the file, so
 * that V8 does not even parse it for a describe request, and it is compiled with the code
 * cache made when the file was built, so that a call skips most of the compile work. A cache
 * made by another Node or V8 version is rejected by V8 itself, and the code compiles as usual.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script, type ScriptOptions } from 'node:vm';
import { MAKES_NODE_CODE_CACHE } from '../protocol/runtime.js';

/** What the bundle sees as `import.meta` (esbuild rewrites `import.meta.url` and co. to this). */
export const IMPORT_META = '__twyltImportMeta';

/** The CommonJS function around the bundle: the source the code cache belongs to. */
export function wrapBundle(code: string): string {
  return `(function (exports, require, module, __filename, __dirname, ${IMPORT_META}) {"use strict";${code}\n})`;
}

/** Compiles and runs the tool bundle as if it were the file at `url`. */
export function evaluateTool(code: string, cache: string | undefined, url: string): void {
  const filename = fileURLToPath(url);
  const options: ScriptOptions = {
    filename,
    cachedData: cache === undefined ? undefined : Buffer.from(cache, 'base64'),
    // An import() the bundler left in place resolves as it would in the built file itself.
    importModuleDynamically: ((specifier: string) => import(specifier)) as unknown as ScriptOptions['importModuleDynamically'],
  };
  const run = new Script(wrapBundle(code), options).runInThisContext() as (...args: unknown[]) => void;
  const module = { exports: {} };
  const meta = { url, filename, dirname: dirname(filename) };
  run.call(undefined, module.exports, createRequire(url), module, filename, meta.dirname, meta);
}

/** The code cache of a bundle, made by the Node that builds it; none when Bun or Deno builds. */
export function codeCache(code: string): string | undefined {
  return MAKES_NODE_CODE_CACHE ? new Script(wrapBundle(code)).createCachedData().toString('base64') : undefined;
}
