/**
 * Every example runs from its `.ts` source with no build and no tsx on each runtime of the
 * matrix: Node 22.18+ strips the types (so the examples may only use syntax that type
 * stripping accepts, which tsconfig.examples.json's `erasableSyntaxOnly` also enforces at
 * build time), Bun and Deno run TypeScript. Each publishes the json_spec of its compiled file.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/process.js';
import { RUNTIME_NAMES, runtimeArgv, runtimeBinary, runtimeMissing } from '../support/runtimes.js';

const EXAMPLES = readdirSync(join(ROOT, 'examples')).filter((name) => existsSync(join(ROOT, 'examples', name, 'tool.ts')));

async function jsonSpec(command: string[]): Promise<unknown> {
  const result = await run(command, { env: { INPUT_DESCRIBE: 'json_spec' } });
  expect(result.code, `${command.join(' ')}: ${result.stderr}`).toBe(0);
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout);
}

for (const runtime of RUNTIME_NAMES) {
  const missing = runtimeBinary(runtime) === undefined ? runtimeMissing(runtime) : undefined;
  describe.skipIf(missing !== undefined)(`${runtime}${missing ? `: skipped, ${missing}` : ''}`, () => {
    it(`runs every example from its .ts source (${EXAMPLES.join(', ')}), publishing the compiled file's json_spec`, async () => {
      expect(EXAMPLES.length).toBeGreaterThan(0);
      for (const name of EXAMPLES) {
        const compiled = await jsonSpec([process.execPath, join(ROOT, 'build/examples', name, 'tool.js')]);
        expect(await jsonSpec([...runtimeArgv(runtime), join(ROOT, 'examples', name, 'tool.ts')]), name).toEqual(compiled);
      }
    }, 120_000);
  });
}
