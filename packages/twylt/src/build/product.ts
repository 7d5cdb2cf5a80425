/**
 * What every executable target of `twylt build` goes through (a Node snapshot, a Bun or a
 * Deno executable): the product is made in a work folder beside the output, must start and
 * describe the tool exactly as the build's describe run did, and only then takes a name
 * beside the output. See ADR 0010 and ADR 0023.
 */
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { JsonSpec } from '../tool/hooks.js';
import { runQuiet, type Quiet } from './child.js';
import { BuildError } from './errors.js';

/** Makes the product in `work` and returns the command that runs it (the product's path last). */
export type MakeProduct = (work: string) => Promise<string[]>;

/**
 * Runs one target in a fresh work folder, checks its product, and returns the product's
 * temporary name beside `outfile` (publish() gives it the final one). The folder is removed
 * in every case.
 */
export async function checkedProduct(outfile: string, spec: JsonSpec, what: string, make: MakeProduct): Promise<string> {
  let work: string;
  try {
    work = await mkdtemp(join(dirname(outfile), `.${basename(outfile)}.twylt-build-`));
  } catch (error) {
    throw new BuildError(`Cannot write ${outfile}: ${(error as Error).message}`);
  }
  try {
    const command = await make(work);
    await checkDescribes(command, spec, what);
    const temporary = `${outfile}.${process.pid}.tmp`;
    await rename(command.at(-1)!, temporary);
    return temporary;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The product must start and describe the tool exactly as the build computed it: never a binary that breaks when called. */
async function checkDescribes(command: string[], spec: JsonSpec, what: string): Promise<void> {
  const result = await runQuiet([...command, '{"describe": "json_spec"}'], dirname(command.at(-1)!), 30_000);
  let described: unknown;
  try {
    described = JSON.parse(result.stdout);
  } catch {
    described = undefined;
  }
  if (result.code !== 0 || result.stderr !== '' || JSON.stringify(described) !== JSON.stringify(spec)) {
    const why = result.code !== 0 || result.timedOut ? `exit ${result.code ?? 'on time-out'}` : result.stderr !== '' ? 'it wrote to stderr' : 'its json_spec differs from the build\'s';
    throw new BuildError(`The ${what} was built but does not run as the tool (${why}); nothing was written:\n${tail(result)}`);
  }
}

/** The end of a child's output, for an error message. */
export function tail(result: Quiet): string {
  // Bun and Deno colour their messages even into a pipe.
  return stripVTControlCharacters(result.stderr.trim() || result.stdout.trim()).slice(-4000);
}
