/**
 * Which files a scan would run (discover.ts), without running any: pack manifests and what
 * is wrong with them, the entry point of a folder, categories, --glob and --exclude.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { discoverTools } from '../../packages/twylt/src/toolset/catalog/discover.js';
import { scratch } from './support.js';

const root = scratch('discover');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Make the files (content: their own path) under a fresh folder; returns it. */
function tree(name: string, files: Record<string, string | null>): string {
  const dir = join(root, name);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content ?? path);
  }
  return dir;
}

const found = async (dir: string, options = {}) => (await discoverTools(dir, options)).map((tool) => ({ ...tool, source: tool.source.slice(dir.length + 1) }));

describe('discovery', () => {
  it('takes one entry point per folder: the launcher beside tool.py, else the first tool file', async () => {
    const dir = tree('entries', {
      'a/tool.py': null,
      'a/run.py': null,
      'b/tool.ts': null,
      'b/tool.js': null,
      'c/run.py': null, // no tool.py beside it: not a launcher
      'c/main.py': null,
      'd/tools/e/tool.mjs': null,
    });
    expect((await found(dir)).map((tool) => [tool.source, tool.category])).toEqual([
      ['a/run.py', 'entries'],
      ['b/tool.ts', 'entries'],
      ['d/tools/e/tool.mjs', 'd'],
    ]);
    // A --glob adds entry points of any name.
    expect((await found(dir, { globs: ['**/main.py'] })).map((tool) => tool.source)).toEqual(['a/run.py', 'b/tool.ts', 'c/main.py', 'd/tools/e/tool.mjs']);
  });

  it('never enters hidden, dependency or test folders unless a --glob names them; --exclude leaves paths out', async () => {
    const dir = tree('hidden', { '.git/x/tool.py': null, 'node_modules/y/tool.js': null, '__pycache__/tool.py': null, 'tests/z/tool.py': null, 'ok/tool.py': null, 'ok2/tool.py': null });
    expect((await found(dir)).map((tool) => tool.source)).toEqual(['ok/tool.py', 'ok2/tool.py']);
    expect((await found(dir, { globs: ['tests/**/tool.py'], excludes: ['ok2'] })).map((tool) => tool.source)).toEqual(['ok/tool.py', 'tests/z/tool.py']);
  });

  it('runs only what a manifest lists, named by the pack, with its manifest and shared code as cache inputs', async () => {
    const dir = tree('pack', {
      'manifest.json': JSON.stringify({ name: 'essential', extra: 'ignored', tools: ['tools/git/log', { path: 'tools/cat', launcher: 'run.py', entry: 'tool.py' }] }),
      'tools/git/log/tool.py': null,
      'tools/git/log/run.py': null,
      'tools/cat/tool.py': null,
      'tools/unlisted/tool.py': null,
      'shared/lib.py': null,
    });
    const tools = await found(dir);
    expect(tools.map((tool) => [tool.source, tool.category])).toEqual([
      ['tools/cat/tool.py', 'essential'],
      ['tools/git/log/run.py', 'essential/git'],
    ]);
    expect(tools[1]!.inputs).toEqual([join(dir, 'tools/git/log'), join(dir, 'manifest.json'), join(dir, 'shared')]);
  });

  it('reports what is wrong with a manifest as a row naming it, and goes on', async () => {
    const bad = tree('bad-manifest', { 'manifest.json': '{"tools": ', 'tool.py': null });
    expect(await found(bad)).toEqual([expect.objectContaining({ source: 'manifest.json', problem: expect.stringContaining('is not a readable JSON pack manifest') })]);
    const wrong = tree('wrong-entries', { 'manifest.json': JSON.stringify({ tools: ['../elsewhere', 'missing', 42, 'empty'] }), 'empty/readme.md': null });
    expect((await found(wrong)).map((tool) => tool.problem)).toEqual([
      expect.stringContaining('tools[0]: "path" "../elsewhere" is outside the pack'),
      expect.stringContaining('tools[1]: the listed tool\'s path "missing" does not exist'),
      expect.stringContaining('tools[2]: a listed tool must be an object with "entrypoint" (or a path), got 42'),
      expect.stringContaining('tools[3]: "empty" has no run.py or tool.py'),
    ]);
  });
});
