/**
 * `twylt build`: single files that run with plain node, answer exactly as the unbuilt tool,
 * and describe themselves from the json_spec embedded at build time.
 */
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, example, fixture, run, singleFile } from '../support/process.js';
import { MATRIX, freshDir, observe } from './matrix.js';
import { TWYLT, build, buildSingles } from './singles.js';

beforeAll(() => buildSingles(['echo', 'echo_json_schema'], ['behaviours']), 300_000);

const built = (name: string) => [process.execPath, singleFile('examples', name)];

describe('twylt build, the command', () => {
  it('writes one executable ESM file and says so on stderr', async () => {
    const dir = freshDir();
    const out = join(dir, 'echo.mjs');
    const result = await build(join(ROOT, 'examples/echo/tool.ts'), out);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^twylt build: wrote .*echo\.mjs \(\d+ KiB, echo 1\.0\.0\)\n$/);
    expect(readFileSync(out, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect((await run([out, '-v'])).stdout).toBe('1.0.0\n');
  });

  it('runs with plain node far from any node_modules', async () => {
    const dir = freshDir();
    const lone = join(dir, 'echo.mjs');
    copyFileSync(singleFile('examples', 'echo'), lone);
    const result = await run([process.execPath, lone, '{"text": "alone"}'], { cwd: dir });
    expect(result).toMatchObject({ code: 0, stdout: '{\n  "text": "alone"\n}\n', stderr: '' });
  });

  it('wrong usage exits 64 with a hint; nothing is written', async () => {
    const dir = freshDir();
    for (const args of [['build'], ['build', join(ROOT, 'examples/echo/tool.ts')], ['build', 'a.ts', 'b.ts', '-o', join(dir, 'x.mjs')]]) {
      const result = await run([...TWYLT, ...args]);
      expect(result.code, args.join(' ')).toBe(64);
      expect(result.stderr).toContain('twylt build --help');
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a tool that cannot be bundled or fails to load: exit 1, the reason, no output file', async () => {
    const dir = freshDir();
    const broken = join(dir, 'broken.ts');
    writeFileSync(broken, "import { defineTool } from 'twylt';\nthrow new Error('boom at import');\n");
    const failing = await build(broken, join(dir, 'out.mjs'));
    expect(failing.code).toBe(1);
    expect(failing.stderr).toContain('did not describe itself');
    expect(failing.stderr).toContain('boom at import');

    const missing = await build(join(dir, 'nowhere.ts'), join(dir, 'out.mjs'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Could not resolve');
    expect(readdirSync(dir)).toEqual(['broken.ts']);
  });
});

describe('a built file describes itself from the embedded json_spec', () => {
  it('without evaluating the tool module; a call does evaluate it', async () => {
    const dir = freshDir();
    const out = join(dir, 'marker.mjs');
    expect((await build(join(ROOT, 'tests/build/fixtures/import_marker.ts'), out)).code).toBe(0);
    const work = freshDir();
    for (const mode of ['brief', 'schema', 'requirements', 'few_shots', 'json_spec']) {
      const described = await run([process.execPath, out], { cwd: work, env: { INPUT_DESCRIBE: mode } });
      expect(described.code, mode).toBe(0);
      expect(existsSync(join(work, 'imported.txt')), mode).toBe(false);
    }
    const viaStdin = await run([process.execPath, out], { cwd: work, input: '{"describe": "json_spec"}' });
    expect(JSON.parse(viaStdin.stdout).name).toBe('import_marker');
    expect(existsSync(join(work, 'imported.txt'))).toBe(false);

    const called = await run([process.execPath, out], { cwd: work, input: '{"n": 3}' });
    expect(called).toMatchObject({ code: 0, stdout: '{\n  "n": 3\n}\n' });
    expect(existsSync(join(work, 'imported.txt'))).toBe(true);
  });
});

describe('a built file answers exactly as the unbuilt tool', () => {
  for (const name of ['echo', 'echo_json_schema']) {
    describe(name, () => {
      for (const [label, c] of Object.entries(MATRIX)) {
        it(`the same exit code, stdout, stderr and output.json: ${label}`, async () => {
          const [unbuilt, single] = await Promise.all([observe(example(name), c), observe(built(name), c)]);
          expect(single).toEqual(unbuilt);
        });
      }
    });
  }

  describe('behaviours fixture: failures of business code are contained the same way', () => {
    const single = [process.execPath, singleFile('fixtures', 'behaviours')];
    for (const action of ['ok', 'throw_error', 'throw_string', 'throw_null', 'throw_hostile', 'reject', 'unhandled_rejection', 'uncaught_in_timer', 'never_settles', 'console_log', 'bad_output', 'nan']) {
      it(action, async () => {
        const c = { args: [JSON.stringify({ action })] };
        const [unbuilt, bundled] = await Promise.all([observe(fixture('behaviours'), c), observe(single, c)]);
        expect(bundled).toEqual(unbuilt);
      });
    }
  });
});

describe('how a built file is laid out', () => {
  it("keeps only Zod's English messages; a tool that configures another locale fails to build, saying why", async () => {
    // The behaviours fixture imports { z } from 'zod', which reaches every locale.
    const single = readFileSync(singleFile('fixtures', 'behaviours'), 'utf8');
    expect(single).not.toContain('Ungültige Eingabe');
    const dir = freshDir();
    const german = await build(join(ROOT, 'tests/build/fixtures/german_zod.ts'), join(dir, 'german.mjs'));
    expect(german.code).toBe(1);
    expect(german.stderr).toContain('Zod\'s "de" locale is not in this file: twylt build keeps only Zod\'s English messages');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('import.meta is the built file: url, filename and dirname', async () => {
    const dir = freshDir();
    const out = join(dir, 'where.mjs');
    expect((await build(join(ROOT, 'tests/build/fixtures/where_am_i.ts'), out)).code).toBe(0);
    const result = await run([process.execPath, out, '{}']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ url: `file://${out}`, filename: out, dirname: dir });
  });

  it('a tool that needs an ES module (top-level await, import.meta.resolve) is built as one and runs', async () => {
    const dir = freshDir();
    const out = join(dir, 'module.mjs');
    expect((await build(join(ROOT, 'tests/build/fixtures/module_only.ts'), out)).code).toBe(0);
    const [unbuilt, single] = await Promise.all([
      run([process.execPath, '--import', 'tsx', join(ROOT, 'tests/build/fixtures/module_only.ts'), '{"text": "hi"}'], { cwd: ROOT }),
      run([process.execPath, out, '{"text": "hi"}']),
    ]);
    expect(single).toMatchObject({ code: 0, stdout: '{\n  "text": "hi!",\n  "resolved": true\n}\n', stderr: '' });
    expect(single).toEqual(unbuilt);
  });

  it('a payload the entry parsed to rule out describe is handed to the tool, not parsed again', async () => {
    const dir = freshDir();
    const out = join(dir, 'counter.mjs');
    expect((await build(join(ROOT, 'tests/build/fixtures/parse_counter.ts'), out)).code).toBe(0);
    const source = join(ROOT, 'tests/build/fixtures/parse_counter.ts');
    const payload = JSON.stringify({ items: [1, 2, 3] });
    for (const c of [{ args: [payload] }, { input: payload }]) {
      const unbuilt = await run([process.execPath, '--import', 'tsx', source, ...(c.args ?? [])], { cwd: ROOT, input: c.input });
      const single = await run([process.execPath, out, ...(c.args ?? [])], { input: c.input });
      expect(JSON.parse(unbuilt.stdout)).toEqual({ parses: 1 });
      expect(JSON.parse(single.stdout)).toEqual({ parses: 0 });
    }
  });

  it('runs the same when V8 rejects the code cache made at build time (other flags or another Node)', async () => {
    // --stack-size changes V8's flag hash, so the embedded cache is refused and the code compiles as usual.
    for (const c of [{ args: ['{"text": "cached"}'] }, { args: ['{"text": 5}'] }, { input: '{"describe": "json_spec"}' }]) {
      const [cached, refused] = await Promise.all([observe(built('echo'), c), observe([process.execPath, '--stack-size=900', singleFile('examples', 'echo')], c)]);
      expect(refused).toEqual(cached);
      expect(cached.code === 0 || cached.code === 2).toBe(true);
    }
  });
});
