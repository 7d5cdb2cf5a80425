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
export async function checkedProduct(outfile: string, spec: JsonSpec, what: string, make: MakeProduct, step: (text: string) => void = () => {}): Promise<string> {
  let work: string;
  try {
    work = await mkdtemp(join(dirname(outfile), `.${basename(outfile)}.twylt-build-`));
  } catch (error) {
    throw new BuildError(`Cannot write ${outfile}: ${(error as Error).message}`);
  }
  try {
    const command = await make(work);
    step(`checking that the ${what} describes the tool`);
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
  if (result.code !== 0 || result.timedOut || result.stderr !== '') {
    const why = result.code !== 0 || result.timedOut ? `exit ${result.code ?? 'on time-out'}` : 'it wrote to stderr';
    throw new BuildError(`The ${what} was built but does not run as the tool (${why}); nothing was written:\n${tail(result)}`);
  }
  const differences = described === undefined ? ['$ (not JSON)'] : differingPaths(spec, described);
  if (differences.length === 0 && JSON.stringify(described) !== JSON.stringify(spec)) differences.push('$ (the order of keys)');
  if (differences.length > 0) {
    const shown = differences.slice(0, MAX_SHOWN).join(', ') + (differences.length > MAX_SHOWN ? `, and ${differences.length - MAX_SHOWN} more` : '');
    throw new BuildError(`The ${what} was built but does not describe the tool as the build did; nothing was written. Its json_spec differs at: ${shown}`);
  }
}

const MAX_SHOWN = 5;

/**
 * The JSON paths at which `actual` differs from `expected` (`requirements.content`,
 * `inputSchema.properties.text.type`, `few_shots[0]`), each with both values in brief:
 * a self-check names what differs instead of printing two whole specs.
 */
export function differingPaths(expected: unknown, actual: unknown, path = '$'): string[] {
  if (isObject(expected) && isObject(actual)) {
    const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])];
    return keys.flatMap((key) => differingPaths(expected[key], actual[key], `${path}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`));
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    const length = Math.max(expected.length, actual.length);
    return Array.from({ length }, (_, i) => differingPaths(expected[i], actual[i], `${path}[${i}]`)).flat();
  }
  return JSON.stringify(expected) === JSON.stringify(actual) ? [] : [`${path} (build: ${brief(expected)}, ran: ${brief(actual)})`];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function brief(value: unknown): string {
  if (value === undefined) return 'absent';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The end of a child's output, for an error message. */
export function tail(result: Quiet): string {
  // Bun and Deno colour their messages even into a pipe.
  return stripVTControlCharacters(result.stderr.trim() || result.stdout.trim()).slice(-4000);
}
