/**
 * The runtime's own subprocess suite (tests/runtime/), run once more against the single files
 * `twylt build` makes of the examples and fixtures: with TWYLT_TEST_BUILT=1, example() and
 * fixture() point at them. Same assertions, same expected bytes.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/process.js';
import { buildSingles } from './singles.js';

await buildSingles();
process.env.TWYLT_TEST_BUILT = '1';
for (const file of readdirSync(join(ROOT, 'tests/runtime')).filter((name) => name.endsWith('.test.ts')).sort()) {
  await import(`../runtime/${file.slice(0, -'.test.ts'.length)}.test.ts`);
}
