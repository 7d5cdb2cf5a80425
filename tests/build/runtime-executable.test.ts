/**
 * The runtime's own subprocess suite (tests/runtime/), run once more against executables
 * that `twylt build --executable` makes of the examples (the probe and echo among them) and
 * the runtime fixtures: with TWYLT_TEST_EXECUTABLES set, example() and fixture() point at
 * them. Same assertions, same expected bytes. The guardrails of a hub configuration come
 * along through the list_directory example's own test (tests/guardrails/list-directory). Each binary is a copy of Node (about 100 MB):
 * they are built once, in a temporary directory that is removed afterwards.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { ROOT } from '../support/process.js';
import { buildExecutables } from './singles.js';

const dir = mkdtempSync(join(tmpdir(), 'twylt-executables-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
try {
  await buildExecutables(dir);
} catch (error) {
  rmSync(dir, { recursive: true, force: true });
  throw error;
}
process.env.TWYLT_TEST_EXECUTABLES = dir;
for (const file of readdirSync(join(ROOT, 'tests/runtime')).filter((name) => name.endsWith('.test.ts')).sort()) {
  await import(`../runtime/${file.slice(0, -'.test.ts'.length)}.test.ts`);
}
await import('../guardrails/list-directory.test.ts');
