/**
 * `twylt build --executable --runtime bun|deno`: the tool's ES module bundle (the same
 * esbuild bundle as a built `.mjs`, its json_spec answered by the tool itself) compiled into
 * one executable by that runtime's own compiler, `bun build --compile` or `deno compile`.
 * Bun and Deno are optional peers, like esbuild: found on PATH or in a node_modules/.bin
 * (the `bun` and `deno` npm packages). See ADR 0023.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { delimiter, dirname, join, resolve } from 'node:path';
import { runQuiet } from './child.js';
import { BuildError } from './errors.js';
import { type MakeProduct, tail } from './product.js';

export type CompiledRuntime = 'bun' | 'deno';
export type ExecutableRuntime = 'node' | CompiledRuntime;
export const EXECUTABLE_RUNTIMES: readonly ExecutableRuntime[] = ['node', 'bun', 'deno'];

/** A compile copies a 100 MB runtime and writes it back; generous on a loaded machine. */
const COMPILE_TIMEOUT_MS = 180_000;

/** The runtime running this process, when it is not Node: Bun and Deno both pose as Node. */
export function hostRuntime(): { name: CompiledRuntime; label: string } | undefined {
  if (process.versions.bun) return { name: 'bun', label: `Bun ${process.versions.bun}` };
  if (process.versions.deno) return { name: 'deno', label: `Deno ${process.versions.deno}` };
  return undefined;
}

/**
 * The runtime's binary: this process's own when the build runs on it, else the first
 * node_modules/.bin/NAME above `from` (the tool's folder) or the working directory, else
 * NAME on PATH; undefined when there is none.
 */
export function findRuntime(name: CompiledRuntime, from: string): string | undefined {
  if (hostRuntime()?.name === name) return process.execPath;
  for (const start of [from, process.cwd()]) {
    for (let dir = resolve(start); ; dir = dirname(dir)) {
      const candidate = join(dir, 'node_modules', '.bin', name);
      if (existsSync(candidate)) return candidate;
      if (dirname(dir) === dir) break;
    }
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** The Bun or Deno target: `bundle` (an ES module) compiled by `binary` in `work`. */
export function compiledProduct(runtime: CompiledRuntime, binary: string, bundle: string): MakeProduct {
  return async (work) => {
    const source = join(work, 'tool.mjs');
    const product = join(work, 'tool');
    await writeFile(source, bundle);
    const args = runtime === 'bun'
      ? [
        'build', '--compile', source, '--outfile', product,
        // Bytecode made now: the executable skips parsing and compiling the bundle.
        '--bytecode', '--format=esm',
        // A tool must answer the same wherever it is run: no .env or bunfig.toml of the caller's folder.
        '--no-compile-autoload-dotenv', '--no-compile-autoload-bunfig',
      ]
      // -A: a tool may do what it does under Node; --no-config: no deno.json of the folder.
      : ['compile', '-A', '--no-check', '--no-config', '--output', product, source];
    const result = await runQuiet([binary, ...args], work, COMPILE_TIMEOUT_MS);
    if (result.code !== 0 || !existsSync(product)) throw new BuildError(compileFailure(runtime, binary, tail(result)));
    return [product];
  };
}

function compileFailure(runtime: CompiledRuntime, binary: string, detail: string): string {
  if (runtime === 'deno' && /denort/.test(detail)) {
    // deno compile builds on Deno's runtime binary (denort) of its own version, which it downloads.
    const cause = detail.split('\n').find((line) => /denort/.test(line) && !/^Download /.test(line))?.trim() ?? '';
    return `deno compile could not get Deno's runtime binary (denort) of ${binary}'s version: give it one with DENORT_BIN=/path/to/denort, or build where deno can download it.\n${cause}`;
  }
  return `${runtime === 'bun' ? 'bun build --compile' : 'deno compile'} failed (${binary}):\n${detail}`;
}
