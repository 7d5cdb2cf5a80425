/** Building tools with the real `twylt build` command, for the tests in this folder. */
import { existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ROOT, executableFile, run, singleFile, type Finished } from '../support/process.js';

export const TWYLT = [process.execPath, join(ROOT, 'packages/twylt/dist/cli/main.js')];

export const EXAMPLES = readdirSync(join(ROOT, 'examples')).filter((name) => existsSync(join(ROOT, 'examples', name, 'tool.ts')));
export const FIXTURES = readdirSync(join(ROOT, 'tests/fixtures/runtime')).filter((name) => name.endsWith('.ts')).map((name) => basename(name, '.ts'));

/** `twylt build <source> -o <outfile> [...options]`; `env` is added to the build's environment. */
export function build(source: string, outfile: string, options: string[] = [], env: Record<string, string> = {}): Promise<Finished> {
  return run([...TWYLT, 'build', source, '-o', outfile, ...options], { timeoutMs: 240_000, env });
}

/** The source of an example or a runtime fixture. */
function sourceOf(kind: 'examples' | 'fixtures', name: string): string {
  return kind === 'examples' ? join(ROOT, 'examples', name, 'tool.ts') : join(ROOT, 'tests/fixtures/runtime', `${name}.ts`);
}

async function buildAll(examples: string[], fixtures: string[], outfileOf: (kind: 'examples' | 'fixtures', name: string) => string, options: string[]): Promise<void> {
  const jobs = [...examples.map((name) => ['examples', name] as const), ...fixtures.map((name) => ['fixtures', name] as const)];
  for (const [kind, name] of jobs) {
    const source = sourceOf(kind, name);
    const result = await build(source, outfileOf(kind, name), options);
    if (result.code !== 0) throw new Error(`twylt build ${source} ${options.join(' ')} failed (exit ${result.code}):\n${result.stderr}`);
  }
}

/** Builds examples and runtime fixtures to where example() and fixture() find them in built mode. */
export function buildSingles(examples = EXAMPLES, fixtures = FIXTURES): Promise<void> {
  return buildAll(examples, fixtures, singleFile, []);
}

/** Builds executables of examples and runtime fixtures under `dir`, where example() and fixture() find them with TWYLT_TEST_EXECUTABLES=dir. */
export function buildExecutables(dir: string, examples = EXAMPLES, fixtures = FIXTURES): Promise<void> {
  return buildAll(examples, fixtures, (kind, name) => executableFile(dir, kind, name), ['--executable']);
}
