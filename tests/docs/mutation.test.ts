/**
 * docs/mutation.md's commands, short of running Stryker (a set takes minutes): each one names
 * a module set scripts/mutation-sets.mjs has, `--incremental` keeps its results in
 * reports/mutation/SET.incremental.json, the sandbox set leaves out proxy.test.ts's
 * end-to-end half, and scripts/mutate.mjs without a set prints its usage.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/process.js';
import { fencedBlocks, readDoc } from './markdown.js';

describe('docs/mutation.md', () => {
  const commands = fencedBlocks(readDoc('docs/mutation.md'))
    .filter((block) => block.lang === 'sh')
    .flatMap((block) => block.body.split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.includes('npm run mutate'));

  it('every command names a module set, and --incremental is among them', async () => {
    const { MUTATION_SETS } = (await import(join(ROOT, 'scripts', 'mutation-sets.mjs'))) as { MUTATION_SETS: Record<string, unknown> };
    expect(commands.length).toBeGreaterThan(0);
    for (const command of commands) {
      const set = /npm run mutate -- (\S+)/.exec(command)?.[1];
      expect(Object.keys(MUTATION_SETS), command).toContain(set);
    }
    expect(commands).toContain('TWYLT_MUTATE_CONCURRENCY=2 npm run mutate -- sandbox --incremental');
  });

  it("each set's incremental results go to reports/mutation/SET.incremental.json, beside its report", () => {
    const read = spawnSync(process.execPath, ['--input-type=module', '-e', "const { default: config } = await import('./stryker.config.mjs'); process.stdout.write(JSON.stringify(config))"], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, TWYLT_MUTATE: 'sandbox' },
    });
    expect(read.stderr).toBe('');
    const config = JSON.parse(read.stdout) as { incrementalFile: string; jsonReporter: { fileName: string } };
    expect(config.incrementalFile).toBe('reports/mutation/sandbox.incremental.json');
    expect(config.jsonReporter.fileName).toBe('reports/mutation/sandbox.json');
  });

  it("the sandbox set's tests leave out proxy.test.ts's end-to-end half (dist/, as root and as nobody)", async () => {
    const { mutationSet } = (await import(join(ROOT, 'scripts', 'mutation-sets.mjs'))) as { mutationSet: (name: string) => { testNamePattern?: RegExp } };
    const pattern = mutationSet('sandbox').testNamePattern!;
    expect(pattern.test('end to end through twylt-mcp the bridge as nobody a wildcard entry')).toBe(false);
    expect(pattern.test("the proxy's sessions: one per call, capped, timed out, ended with the call closes a tunnel idle for idleMs")).toBe(true);
  });

  it('scripts/mutate.mjs without a set: its usage, exit 2', () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'mutate.mjs')], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('usage: npm run mutate -- SET [STRYKER_ARG...]');
  });
});
