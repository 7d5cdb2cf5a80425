/**
 * `twylt check` (the built command) passes on every TypeScript example in the repository.
 * Each example is bundled with esbuild first: the suite starts a tool about a hundred times,
 * and a TypeScript loader on every start would dominate. docs/conformance.md shows the same
 * check run through tsx.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleTool } from '../support/bundle-tool.js';
import { fixture } from '../support/process.js';
import { checkReport, repoRoot } from '../support/twylt-cli.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-check-examples-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const check = (command: string[]) => checkReport(command, ['--timeout', '30000']);

describe('the TypeScript examples', () => {
  const examples = readdirSync(join(repoRoot, 'examples'))
    .map((name) => join(repoRoot, 'examples', name, 'tool.ts'))
    .filter((file) => existsSync(file));
  const bundles = new Map<string, string>();
  beforeAll(async () => {
    for (const example of examples) bundles.set(example, await bundleTool(example, scratch));
  });

  it('there are examples to check', () => {
    expect(examples.length).toBeGreaterThan(0);
  });

  it('our runtime passes every check, nothing skipped, on maps, free-form values, Any and an optional model (the Zod twin of the Python shapes tool)', async () => {
    const { code, report } = await check(fixture('py_shapes_twin'));
    expect(report.results.filter((r) => r.status !== 'pass').map((r) => `${r.id}: ${r.message}`)).toEqual([]);
    expect(code).toBe(0);
  }, 180_000);

  it('flags an open model of a TypeScript tool: schema.closed fails, naming it, and the check exits 1 (not only the Python fixtures, which need python3)', async () => {
    const { code, report } = await check(fixture('open_object'));
    expect(report.results.filter((r) => r.status === 'fail').map((r) => `${r.id}: ${r.message}`)).toEqual(['schema.closed: outputSchema is an open object']);
    expect(code).toBe(1);
  }, 180_000);

  for (const example of examples) {
    const name = example.slice(join(repoRoot, 'examples').length + 1);
    it(`passes every check: examples/${name}`, async () => {
      const { code, report } = await check([process.execPath, bundles.get(example)!]);
      const failures = report.results.filter((r) => r.status === 'fail').map((r) => `${r.id}: ${r.message}`);
      expect(failures).toEqual([]);
      expect(code).toBe(0);
    }, 180_000);
  }
});
