/**
 * What a scan may run (discover.ts), from the source, one row per case with its exact
 * outcome (docs/mutation.md): a manifest's listed tools stay inside the pack (as written and
 * once links are followed), each field's type, the bootstrap's fallbacks, the pack's fields,
 * and the rows a broken pack becomes. discover.test.ts has the walk itself.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { discoverTools } from '../../packages/twylt/src/toolset/catalog/discover.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-discover-unit-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let serial = 0;
/** A fresh pack folder with `files` (null: the file's own path as content) and `links` (path -> target). */
function pack(files: Record<string, string | null>, links: Record<string, string> = {}): string {
  const dir = join(root, `p${++serial}`);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content ?? path);
  }
  for (const [path, target] of Object.entries(links)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    symlinkSync(target, join(dir, path));
  }
  return dir;
}

/** The sources (relative) and problems (the manifest's path left out) a scan of `dir` finds. */
async function outcome(dir: string): Promise<(string | { problem: string })[]> {
  return (await discoverTools(dir)).map((tool) => (tool.problem ? { problem: tool.problem.replace(`${join(dir, 'manifest.json')}: `, '') } : tool.source.slice(dir.length + 1)));
}

const manifest = (tools: unknown, more: Record<string, unknown> = {}) => JSON.stringify({ name: 'p', ...more, tools });

describe('a listed tool stays inside its pack', () => {
  const outside = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-discover-outside-')));
  writeFileSync(join(outside, 'tool.py'), '');
  afterAll(() => rmSync(outside, { recursive: true, force: true }));

  const rows: [string, unknown, Record<string, string | null>, Record<string, string>, (string | { problem: string })[]][] = [
    ['an entrypoint inside', { entrypoint: 'a/tool.py' }, { 'a/tool.py': null }, {}, ['a/tool.py']],
    ['a file whose name starts with ".." is inside', { entrypoint: '..tool.py' }, { '..tool.py': null }, {}, ['..tool.py']],
    ['a folder named "..x" is inside', { entrypoint: '..x/tool.py' }, { '..x/tool.py': null }, {}, ['..x/tool.py']],
    ['"." as a path: the pack itself, its entry point', '.', { 'tool.py': null }, {}, ['tool.py']],
    ['../ leaves it', { entrypoint: '../x/tool.py' }, {}, {}, [{ problem: 'tools[0]: "entrypoint" "../x/tool.py" is outside the pack' }]],
    ['..', { entrypoint: '..' }, {}, {}, [{ problem: 'tools[0]: "entrypoint" ".." is outside the pack' }]],
    ['an absolute path elsewhere', { entrypoint: '/etc/passwd' }, {}, {}, [{ problem: 'tools[0]: "entrypoint" "/etc/passwd" is outside the pack' }]],
    ['a link to a file elsewhere', { entrypoint: 'ln.py' }, {}, { 'ln.py': 'OUTSIDE/tool.py' }, [{ problem: 'tools[0]: "entrypoint" "ln.py" leads outside the pack (to OUTSIDE/tool.py)' }]],
    ['a link to a folder elsewhere (older path form)', 'dir', {}, { dir: 'OUTSIDE' }, [{ problem: 'tools[0]: "path" "dir" leads outside the pack (to OUTSIDE)' }]],
    ['a link inside the pack', { entrypoint: 'ln.py' }, { 'real.py': null }, { 'ln.py': 'real.py' }, ['ln.py']],
    ['a bootstrap elsewhere: refused, never the entry point instead', { entrypoint: 'tool.py', bootstrap: '../run.py' }, { 'tool.py': null }, {}, [{ problem: 'tools[0]: "bootstrap" "../run.py" is outside the pack' }]],
    ['a bootstrap linked elsewhere: refused', { entrypoint: 'tool.py', bootstrap: 'run.py' }, { 'tool.py': null }, { 'run.py': 'OUTSIDE/tool.py' }, [{ problem: 'tools[0]: "bootstrap" "run.py" leads outside the pack (to OUTSIDE/tool.py)' }]],
    ['a bootstrap shipped: it is what runs', { entrypoint: 'tool.py', bootstrap: 'run.py' }, { 'tool.py': null, 'run.py': null }, {}, ['run.py']],
    ['a bootstrap not shipped: the entry point', { entrypoint: 'tool.py', bootstrap: 'run.py' }, { 'tool.py': null }, {}, ['tool.py']],
    ['a bootstrap that is a folder: the entry point', { entrypoint: 'tool.py', bootstrap: 'sub' }, { 'tool.py': null, 'sub/x': null }, {}, ['tool.py']],
    ['an entrypoint that is a folder', { entrypoint: 'sub' }, { 'sub/tool.py': null }, {}, [{ problem: 'tools[0]: "entrypoint" must be a file, "sub" is a folder' }]],
    ['an entrypoint missing', { entrypoint: 'none.py' }, {}, {}, [{ problem: 'tools[0]: the listed tool\'s entrypoint "none.py" does not exist' }]],
  ];
  for (const [what, item, files, links, expected] of rows) {
    it(what, async () => {
      const fixed = Object.fromEntries(Object.entries(links).map(([path, target]) => [path, target.replace('OUTSIDE', outside)]));
      const dir = pack({ 'manifest.json': manifest([item]), ...files }, fixed);
      const want = expected.map((row) => (typeof row === 'string' ? row : { problem: row.problem.replace('OUTSIDE', outside) }));
      expect(await outcome(dir)).toEqual(want);
    });
  }
});

describe("a listed tool's fields", () => {
  const rows: [string, unknown, (string | { problem: string })[]][] = [
    ...['name', 'description', 'entrypoint', 'bootstrap', 'path', 'launcher', 'entry'].map(
      (field) => [`"${field}" not a string`, { entrypoint: 'tool.py', [field]: 5 }, [{ problem: `tools[0]: "${field}" must be a string, got 5` }]] as [string, unknown, { problem: string }[]],
    ),
    ['"name" empty', { entrypoint: 'tool.py', name: '' }, [{ problem: 'tools[0]: "name" must not be empty' }]],
    ['neither entrypoint nor path', { name: 'x' }, [{ problem: 'tools[0] ("x"): a listed tool needs "entrypoint" (or "path")' }]],
    ['not an object', [1], [{ problem: 'tools[0]: a listed tool must be an object with "entrypoint" (or a path), got [1]' }]],
    ['null', null, [{ problem: 'tools[0]: a listed tool must be an object with "entrypoint" (or a path), got null' }]],
    ['older form: a launcher named and shipped', { path: 'sub', launcher: 'go.py' }, ['sub/go.py']],
    ['older form: a launcher named, not shipped; the entry named', { path: 'sub', launcher: 'no.py', entry: 'main.py' }, ['sub/main.py']],
    ['older form: tool.py as a file, with run.py beside it', { path: 'sub/tool.py' }, ['sub/run.py']],
    ['older form: another file as it is', { path: 'sub/main.py' }, ['sub/main.py']],
    ['older form: a folder without an entry point', { path: 'empty' }, [{ problem: 'tools[0]: "empty" has no run.py or tool.py, tool.ts, tool.mts, tool.js, tool.mjs' }]],
  ];
  for (const [what, item, expected] of rows) {
    it(what, async () => {
      const dir = pack({ 'manifest.json': manifest([item]), 'tool.py': null, 'sub/tool.py': null, 'sub/run.py': null, 'sub/go.py': null, 'sub/main.py': null, 'empty/readme': null });
      expect(await outcome(dir)).toEqual(expected);
    });
  }

  it('a refused tool names itself and its description as far as the manifest says', async () => {
    const dir = pack({
      'manifest.json': manifest([
        { name: 'n', description: 'd', entrypoint: 'none.py' },
        { description: '', entrypoint: 'none.py' },
        { entrypoint: 'none.py' },
        { name: 'only', entrypoint: 'none.py' },
        { name: 'x', description: 5, entrypoint: 'none.py' },
      ]),
    });
    const tools = await discoverTools(dir);
    // Strictly: no key for what the manifest does not say.
    expect(tools.slice(3).map((tool) => tool.listed)).toStrictEqual([{ name: 'only' }, { name: 'x' }]);
    expect(tools.slice(0, 3).map((tool) => [tool.listed, tool.problem?.split(': ')[1], tool.category, tool.inputs, tool.pack?.name])).toEqual([
      [{ name: 'n', description: 'd' }, 'tools[0] ("n")', 'p', [join(dir, 'manifest.json')], 'p'],
      // An empty description alone names nothing.
      [undefined, 'tools[1]', 'p', [join(dir, 'manifest.json')], 'p'],
      [undefined, 'tools[2]', 'p', [join(dir, 'manifest.json')], 'p'],
    ]);
  });

  it('a listed tool carries what the manifest says of it; an excluded one is left out', async () => {
    const dir = pack({ 'manifest.json': manifest([{ name: 'a', description: '', entrypoint: 'a/tool.py' }, { entrypoint: 'b/tool.py' }, { path: 'c', name: 'c' }]), 'a/tool.py': null, 'b/tool.py': null, 'c/tool.py': null });
    expect((await discoverTools(dir)).map((tool) => [tool.source.slice(dir.length + 1), tool.listed])).toStrictEqual([
      ['a/tool.py', { name: 'a', description: '' }],
      ['b/tool.py', {}],
      ['c/tool.py', { name: 'c' }],
    ]);
    expect((await discoverTools(dir, { excludes: ['b/tool.py'] })).map((tool) => tool.source.slice(dir.length + 1))).toEqual(['a/tool.py', 'c/tool.py']);
  });
});

describe("a pack's own fields", () => {
  const rows: [string, Record<string, unknown>, (string | { problem: string })[], string][] = [
    ['a name: the category', { name: 'named' }, ['t/tool.py'], 'named'],
    ['no name: the folder', {}, ['t/tool.py'], 'FOLDER'],
    ['an empty name: a row, the folder', { name: '' }, [{ problem: '"name" must be a non-empty string (the pack\'s category), got ""' }, 't/tool.py'], 'FOLDER'],
    ['a name not text: a row', { name: 7 }, [{ problem: '"name" must be a non-empty string (the pack\'s category), got 7' }, 't/tool.py'], 'FOLDER'],
    ['a version not text: a row', { name: 'v', version: 1 }, [{ problem: '"version" must be a string, got 1' }, 't/tool.py'], 'v'],
    ['protocol TWYLT 1.8', { name: 'v', protocol: 'TWYLT 1.8' }, ['t/tool.py'], 'v'],
    ['protocol TWYLT 1', { name: 'v', protocol: 'TWYLT 1' }, ['t/tool.py'], 'v'],
    ['protocol TWYLT 1.10.2', { name: 'v', protocol: 'TWYLT 1.10.2' }, ['t/tool.py'], 'v'],
    ['protocol TWYLT 2: none run', { name: 'v', protocol: 'TWYLT 2' }, [{ problem: '"protocol" is "TWYLT 2": this scan reads packs of "TWYLT 1"; none of its tools was run' }], ''],
    ['protocol TWYLT 10: none run', { name: 'v', protocol: 'TWYLT 10' }, [{ problem: '"protocol" is "TWYLT 10": this scan reads packs of "TWYLT 1"; none of its tools was run' }], ''],
    ['protocol "x TWYLT 1": none run', { name: 'v', protocol: 'x TWYLT 1' }, [{ problem: '"protocol" is "x TWYLT 1": this scan reads packs of "TWYLT 1"; none of its tools was run' }], ''],
    ['protocol not text: none run', { name: 'v', protocol: 1 }, [{ problem: '"protocol" is 1: this scan reads packs of "TWYLT 1"; none of its tools was run' }], ''],
    ['protocol a list that reads as "TWYLT 1": none run', { name: 'v', protocol: ['TWYLT 1'] }, [{ problem: '"protocol" is ["TWYLT 1"]: this scan reads packs of "TWYLT 1"; none of its tools was run' }], ''],
    ['a value of exactly 60 characters is shown whole', { name: 'v', version: ['x'.repeat(56)] }, [{ problem: `"version" must be a string, got ${JSON.stringify(['x'.repeat(56)])}` }, 't/tool.py'], 'v'],
    ['tools not a list', { name: 'v', tools: {} }, [{ problem: '"tools" must be a list of {"name", "entrypoint", "bootstrap"?, "description"?} objects (or paths)' }], ''],
    ['a long value is shown clipped', { name: 'x'.repeat(70).split('') }, [{ problem: `"name" must be a non-empty string (the pack's category), got ${JSON.stringify('x'.repeat(70).split('')).slice(0, 57)}...` }, 't/tool.py'], 'FOLDER'],
  ];
  for (const [what, fields, expected, category] of rows) {
    it(what, async () => {
      const dir = pack({ 'manifest.json': JSON.stringify(fields), 't/tool.py': null });
      expect(await outcome(dir)).toEqual(expected);
      const tool = (await discoverTools(dir)).find((one) => !one.problem);
      if (category !== '') expect(tool?.category).toBe(category.replace('FOLDER', dir.split('/').pop()!));
      if (tool) expect(tool.pack?.version).toBe(typeof fields.version === 'string' ? fields.version : undefined);
    });
  }

  it('a manifest that is not an object, or not JSON: one row, nothing run', async () => {
    const list = pack({ 'manifest.json': '[]', 'tool.py': null });
    expect(await discoverTools(list)).toEqual([{ source: join(list, 'manifest.json'), root: list, category: list.split('/').pop(), inputs: [join(list, 'manifest.json')], problem: `${join(list, 'manifest.json')}: a pack manifest is a JSON object` }]);
    const broken = pack({ 'manifest.json': '{', 'tool.py': null });
    const [row] = await discoverTools(broken);
    expect({ ...row, problem: row!.problem!.split(':')[0] }).toEqual({ source: join(broken, 'manifest.json'), root: broken, category: broken.split('/').pop(), inputs: [join(broken, 'manifest.json')], problem: `${join(broken, 'manifest.json')} is not a readable JSON pack manifest` });
  });

  it("the pack's requirements.txt is an input of its tools (a folder of that name is not); its version is kept", async () => {
    const dir = pack({ 'manifest.json': JSON.stringify({ name: 'r', version: '1.2' }), 'requirements.txt': 'x', 't/tool.py': null });
    const [tool] = await discoverTools(dir);
    expect(tool).toEqual({
      source: join(dir, 't/tool.py'),
      root: dir,
      // The folders above the tool's own: none.
      category: 'r',
      inputs: [join(dir, 't'), join(dir, 'manifest.json'), join(dir, 'shared'), join(dir, 'requirements.txt')],
      pack: { root: dir, name: 'r', version: '1.2', requirements: join(dir, 'requirements.txt') },
    });
    const folder = pack({ 'manifest.json': JSON.stringify({ name: 'r' }), 'requirements.txt/x': 'x', 't/tool.py': null });
    expect((await discoverTools(folder))[0]!.pack).toEqual({ root: folder, name: 'r' });
  });

  it('a scanned folder that cannot be read is an error of the scan (its caller reports it), not a row', async () => {
    const missing = join(pack({}), 'no-such-folder');
    await expect(discoverTools(missing)).rejects.toThrow(`ENOENT: no such file or directory, scandir '${missing}'`);
  });

  it("the tools come sorted by path, whatever the manifest's order", async () => {
    const dir = pack({ 'manifest.json': manifest(['c/tool.py', 'a/tool.py', 'b/tool.py']), 'a/tool.py': null, 'b/tool.py': null, 'c/tool.py': null });
    expect(await outcome(dir)).toEqual(['a/tool.py', 'b/tool.py', 'c/tool.py']);
  });

  it('test folders of every name are never entered', async () => {
    const dir = pack({ 'test/a/tool.py': null, 'tests/b/tool.py': null, '__tests__/c/tool.py': null, 'testing/d/tool.py': null });
    expect(await outcome(dir)).toEqual(['testing/d/tool.py']);
  });

  it('a folder named like a tool file is no entry point', async () => {
    const dir = pack({ 'tool.py/x': null, 'tool.ts': null });
    expect(await outcome(dir)).toEqual(['tool.ts']);
    const listed = pack({ 'manifest.json': manifest(['sub']), 'sub/tool.py/x': null, 'sub/tool.js': null });
    expect(await outcome(listed)).toEqual(['sub/tool.js']);
  });

  it('a tool outside any pack: its folder as inputs, the folders between as its category', async () => {
    const dir = pack({ 'a/tools/b/tool.py': null, 'c/d/e/tool.py': null, 'tool.py': null });
    expect((await discoverTools(dir)).map((tool) => [tool.source.slice(dir.length + 1), tool.category, tool.inputs, 'pack' in tool])).toEqual([
      ['a/tools/b/tool.py', 'a', [join(dir, 'a/tools/b')], false],
      ['c/d/e/tool.py', 'c/d', [join(dir, 'c/d/e')], false],
      ['tool.py', dir.split('/').pop(), [dir], false],
    ]);
  });
});

describe('a folder the scan cannot read', () => {
  // As root every folder is readable: the scan runs as nobody (effective uid only, so it can
  // come back), which Node.js refuses in a worker thread (Stryker's Vitest runner runs tests in
  // threads; the suite runs them in processes).
  const asRoot = process.geteuid?.() === 0;
  const noSeteuid = asRoot && !isMainThread;
  it.skipIf(noSeteuid)(`below the scanned folder: a row naming it and why, under the scanned folder's category; the rest is scanned${noSeteuid ? ' (skipped: as root it needs process.seteuid, refused in a worker thread)' : ''}`, async () => {
    const dir = pack({ 'a/tool.py': null, 'locked/tool.py': null, 'z/tool.py': null });
    const locked = join(dir, 'locked');
    chmodSync(root, 0o755);
    chmodSync(locked, asRoot ? 0o700 : 0o000);
    let tools;
    try {
      if (asRoot) process.seteuid!(65534);
      try {
        tools = await discoverTools(dir);
      } finally {
        if (asRoot) process.seteuid!(0);
      }
    } finally {
      chmodSync(locked, 0o755);
      chmodSync(root, 0o700);
    }
    expect(tools.map((tool) => tool.source)).toEqual([join(dir, 'a/tool.py'), locked, join(dir, 'z/tool.py')]);
    expect(tools[1]).toEqual({ source: locked, root: dir, category: dir.split('/').pop(), inputs: [], problem: `cannot read the folder ${locked}: EACCES: permission denied, scandir '${locked}'` });
  });

  it('below the scanned folder, a path longer than the system takes (ENAMETOOLONG, root too): a row naming it; the rest is scanned', async () => {
    const dir = pack({ 'a/tool.py': null });
    // Made from inside, a folder at a time (a path this long is refused whole): 17 names of 250 characters.
    const names = Array.from({ length: 17 }, (_, at) => `${String.fromCharCode(98 + at)}${'x'.repeat(249)}`);
    const made = spawnSync(process.execPath, ['-e', 'const fs = require("fs"); for (const name of process.argv.slice(1)) { fs.mkdirSync(name); process.chdir(name); }', ...names], { cwd: dir, encoding: 'utf8' });
    expect(made.stderr).toBe('');
    try {
      const tools = await discoverTools(dir);
      const deep = tools.find((tool) => tool.problem !== undefined);
      expect(tools.map((tool) => tool.source)).toEqual([join(dir, 'a/tool.py'), deep?.source]);
      expect(deep!.source.length).toBeGreaterThan(4096);
      expect(deep).toEqual({ source: join(dir, ...names.slice(0, deep!.source.slice(dir.length + 1).split('/').length)), root: dir, category: dir.split('/').pop(), inputs: [], problem: `cannot read the folder ${deep!.source}: ENAMETOOLONG: name too long, scandir '${deep!.source}'` });
    } finally {
      // rm works down the tree a folder at a time; Node.js's rm takes whole paths.
      spawnSync('rm', ['-rf', '--', join(dir, names[0]!)], { cwd: dir });
    }
  });
});
