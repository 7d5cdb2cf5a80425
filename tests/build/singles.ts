/** Building tools with the real `twylt build` command, for the tests in this folder. */
import { existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ROOT, run, singleFile, type Finished } from '../support/process.js';

export const TWYLT = [process.execPath, join(ROOT, 'packages/twylt/dist/cli/main.js')];

export const EXAMPLES = readdirSync(join(ROOT, 'examples')).filter((name) => existsSync(join(ROOT, 'examples', name, 'tool.ts')));
export const FIXTURES = readdirSync(join(ROOT, 'tests/fixtures/runtime')).filter((name) => name.endsWith('.ts')).map((name) => basename(name, '.ts'));

export function build(source: string, outfile: string): Promise<Finished> {
  return run([...TWYLT, 'build', source, '-o', outfile], { timeoutMs: 120_000 });
}

/** Builds examples and runtime fixtures to where example() and fixture() find them in built mode. */
export async function buildSingles(examples = EXAMPLES, fixtures = FIXTURES): Promise<void> {
  const jobs = [
    ...examples.map((name) => [join(ROOT, 'examples', name, 'tool.ts'), singleFile('examples', name)]),
    ...fixtures.map((name) => [join(ROOT, 'tests/fixtures/runtime', `${name}.ts`), singleFile('fixtures', name)]),
  ];
  for (const [source, outfile] of jobs) {
    const result = await build(source!, outfile!);
    if (result.code !== 0) throw new Error(`twylt build ${source} failed (exit ${result.code}):\n${result.stderr}`);
  }
}
