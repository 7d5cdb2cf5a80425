/**
 * `twylt scan` over the fixture packs: which files it runs (and which it never does), the
 * report, the exit codes, duplicate names, a tool that hangs on describe, the catalog file.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeStripsTypes } from '../../packages/twylt/src/toolset/catalog/runtime.js';
import { parseConfig } from '../../packages/twylt/src/toolset/config.js';
import { NO_PYTHON_REASON, noPython } from '../support/python.js';
import { runTwylt } from '../support/twylt-cli.js';
import { PACKS, WORKSPACES, markers, scan, scanJson, scratch } from './support.js';

const dir = scratch('scan');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const marked = { TWYLT_TEST_MARKER_DIR: dir };

describe.skipIf(noPython)(`scanning packs${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  it('finds the entry points, judges each, and runs nothing else', async () => {
    const { code, rows } = await scanJson([join(PACKS, 'essential'), join(PACKS, 'loose')], marked);
    expect(code).toBe(1); // one tool needs an install
    expect([...rows.keys()].sort()).toEqual([
      'essential/tools/echo/run.py',
      'essential/tools/needs_dep/run.py',
      'essential/tools/upper/run.py',
      'loose/text/count/tool.mjs',
      'loose/text/shout/tool.ts',
    ]);
    expect(rows.get('essential/tools/echo/run.py')).toMatchObject({ name: 'pack_echo', version: '1.2.0', status: 'ok', category: 'essential', reason: '' });
    // Run by its absolute path, in a workspace of its own: never in its code's folder.
    expect(rows.get('essential/tools/echo/run.py')!.command.at(-1)).toBe(join(PACKS, 'essential/tools/echo/run.py'));
    expect(rows.get('essential/tools/echo/run.py')!.cwd).toMatch(new RegExp(`^${WORKSPACES}/echo-[0-9a-f]{12}$`));
    expect(rows.get('loose/text/shout/tool.ts')).toMatchObject({ name: 'shout', status: 'ok', category: 'text' });
    expect(rows.get('loose/text/count/tool.mjs')).toMatchObject({ name: 'count_chars', status: 'ok', category: 'text' });
    const needs = rows.get('essential/tools/needs_dep/run.py')!;
    expect(needs).toMatchObject({ name: 'to_toml', status: 'needs_install', requirements: { tool: 'pip', content: 'tomli-w==1.2.0\n' } });
    // The exact command an --install would run, into the cache, never the global site-packages.
    expect(needs.reason).toMatch(/ -m pip install .*--target \S+\/twylt\/envs\/pip-[0-9a-f]{16} -- tomli-w==1\.2\.0$/);
    // The hint names a command that exists, with the folder scanned.
    expect(needs.reason).toContain(`\`twylt scan --install ${join(PACKS, 'essential')}\` installs them, running: `);
    // A TypeScript tool installed with twylt from a path publishes a range anyone can install: what it imports, at the installed versions.
    expect(JSON.parse((rows.get('loose/text/shout/tool.ts')!.requirements as { content: string }).content)).toEqual({ dependencies: { twylt: '^0.1.0', zod: expect.stringMatching(/^\^4\.\d+\.\d+$/) } });
    // Unlisted files of a pack, tests, node_modules, hidden and __pycache__ folders, other scripts: never run.
    expect(markers(dir)).toEqual([]);
  });

  it('prints a table for people', async () => {
    const result = await scan([join(PACKS, 'essential')], marked);
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+VERSION\s+CATEGORY\s+STATUS\s+WHY$/);
    expect(lines).toContainEqual(expect.stringMatching(/^pack_echo\s+1\.2\.0\s+essential\s+ok\s+-$/));
    expect(lines).toContainEqual(expect.stringMatching(/^to_toml\s+0\.1\.0\s+essential\s+needs_install\s+its dependencies are missing; `twylt scan --install \S+` installs them, running: /));
    expect(lines.at(-1)).toBe('3 tools: 2 ok, 1 need install, 0 failed');
  });

  it('runs what --glob names, even in a tests folder', async () => {
    const { rows } = await scanJson([join(PACKS, 'loose'), '--glob', 'tests/*.py', '--exclude', 'text'], marked);
    expect([...rows.keys()]).toEqual(['loose/tests/tool.py']);
    expect(rows.get('loose/tests/tool.py')!.status).toBe('failed');
    expect(markers(dir)).toHaveLength(1);
    for (const file of markers(dir)) rmSync(join(dir, file));
  });

  it('fails both tools of one name, naming both files, and --prefix renames', async () => {
    const same = await scanJson([join(PACKS, 'dupes')]);
    expect(same.code).toBe(1);
    for (const [mine, other] of [['one', 'two'], ['two', 'one']]) {
      const row = same.rows.get(`dupes/${mine}/tool.py`)!;
      expect(row.status).toBe('failed');
      expect(row.reason).toContain(`the name "same" is also published by ${join(PACKS, 'dupes', other, 'tool.py')}`);
    }
    const renamed = await scanJson([join(PACKS, 'dupes'), '--prefix', `${join(PACKS, 'dupes/two')}=two_`]);
    expect(renamed.code).toBe(0);
    expect([...renamed.rows.values()].map((row) => row.name).sort()).toEqual(['same', 'two_same']);
  });

  it('stops a tool that hangs on describe at its time-out and serves the rest', async () => {
    const started = Date.now();
    const { code, rows } = await scanJson([join(PACKS, 'broken'), join(PACKS, 'dupes/one'), '--timeout', '5000']);
    expect(code).toBe(1);
    expect(rows.get('broken/hang/tool.py')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^cannot describe it: .*5000 ms/) });
    expect(rows.get('dupes/one/tool.py')!.status).toBe('ok');
    expect(Date.now() - started).toBeLessThan(60_000);
  });

  it('writes the ok tools as a catalog --config reads, keeping names given by hand', async () => {
    const file = join(dir, 'catalog.json');
    const result = await scan([join(PACKS, 'essential'), '--write', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('wrote 2 tools to');
    const entries = parseConfig(readFileSync(file, 'utf8'), file);
    expect(entries.map((entry) => [entry.category, entry.source])).toEqual([
      ['essential', join(PACKS, 'essential/tools/echo/run.py')],
      ['essential', join(PACKS, 'essential/tools/upper/run.py')],
    ]);
    expect(entries[0]!.describeCache).toMatchObject({ inputs: [join(PACKS, 'essential/tools/echo'), join(PACKS, 'essential/manifest.json'), join(PACKS, 'essential/shared')], spec: { name: 'pack_echo' } });
    const catalog = JSON.parse(readFileSync(file, 'utf8'));
    catalog.tools[1].name = 'shout_it';
    writeFileSync(file, JSON.stringify(catalog));
    const again = await scanJson([join(PACKS, 'essential'), '--write', file]);
    expect(again.rows.get('essential/tools/upper/run.py')!.name).toBe('shout_it');
    expect(parseConfig(readFileSync(file, 'utf8'), file)[1]!.name).toBe('shout_it');
  });
});

describe('describes at once', () => {
  it('are never more than --jobs', async () => {
    // Each tool notes how many describes are running as it starts one, and takes 300 ms.
    const running = join(dir, 'running');
    mkdirSync(running);
    const seen = join(dir, 'seen.log');
    const source = (name: string) => `import { appendFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
const me = ${JSON.stringify(running)} + '/' + process.pid;
writeFileSync(me, '');
appendFileSync(${JSON.stringify(seen)}, readdirSync(${JSON.stringify(running)}).length + '\\n');
const schema = { type: 'object', properties: {}, additionalProperties: false };
setTimeout(() => {
  rmSync(me);
  console.log(JSON.stringify({ format_version: '1.8', name: '${name}', version: '1', description: '', requirements: { tool: 'npm', format: 'package.json', content: '{}' }, inputSchema: schema, outputSchema: schema, few_shots: [] }));
}, 300);
`;
    for (let i = 0; i < 8; i++) {
      mkdirSync(join(dir, 'many', `t${i}`), { recursive: true });
      writeFileSync(join(dir, 'many', `t${i}`, 'tool.mjs'), source(`t${i}`));
    }
    const { code, rows } = await scanJson([join(dir, 'many'), '--jobs', '2']);
    expect(code).toBe(0);
    expect(rows.size).toBe(8);
    const counts = readFileSync(seen, 'utf8').trim().split('\n').map(Number);
    expect(counts).toHaveLength(8);
    expect(Math.max(...counts)).toBeLessThanOrEqual(2);
  });
});

describe.skipIf(nodeStripsTypes())(`a TypeScript tool where this Node cannot strip types${nodeStripsTypes() ? ': skipped, this Node runs .ts files itself' : ''}`, () => {
  it('runs through the tsx beside twylt when its project has none (ADR 0035)', async () => {
    const project = join(dir, 'no-tsx');
    mkdirSync(join(project, 'shout'), { recursive: true });
    copyFileSync(join(PACKS, 'loose/text/shout/tool.ts'), join(project, 'shout', 'tool.ts'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', dependencies: { zod: '^4.0.0' } }));
    const { code, rows } = await scanJson([project]);
    expect(code).toBe(1);
    // Loaded through tsx, it misses zod: its launcher describes it from the source (without tsx: a describe error).
    expect([...rows.values()][0]).toMatchObject({ name: 'shout', status: 'needs_install', command: ['node', expect.stringMatching(/\/dist\/bootstrap\/launch\.js$/), join(project, 'shout', 'tool.ts')] });
  });
});

describe.skipIf(noPython)(`the runtime a catalog names${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  it('is node or python3 as found through PATH, or what --node names; never the binary that ran the scan', async () => {
    const catalog = join(dir, 'portable.json');
    // runTwylt, not scan(): no --python, so the default is what is recorded.
    const result = await runTwylt(['scan', join(PACKS, 'loose/text/count'), join(PACKS, 'dupes/one'), '--write', catalog]);
    expect(result.code, result.stderr).toBe(0);
    const entries = parseConfig(readFileSync(catalog, 'utf8'), catalog);
    expect(entries.map((entry) => entry.command[0]).sort()).toEqual(['node', 'python3']);
    expect(readFileSync(catalog, 'utf8')).not.toContain(JSON.stringify(process.execPath));
    const given = join(dir, 'given.json');
    expect((await runTwylt(['scan', join(PACKS, 'loose/text/count'), '--node', process.execPath, '--write', given])).code).toBe(0);
    expect(parseConfig(readFileSync(given, 'utf8'), given)[0]!.command[0]).toBe(process.execPath);
    // A --node that is no Node is that tool's row, not a crash.
    const wrong = await scanJson([join(PACKS, 'loose/text/count'), '--node', join(dir, 'no-such-node')]);
    expect([...wrong.rows.values()][0]).toMatchObject({ status: 'failed', reason: `no Node to run it: "${join(dir, 'no-such-node')}" is not found; name one with --node` });
  });
});

describe('wrong usage', () => {
  it('exits 64 with a message', async () => {
    for (const args of [[], [join(dir, 'nowhere')], [PACKS, '--jobs', '0'], [PACKS, '--prefix', 'x'], [PACKS, '--bogus']]) {
      const result = await scan(args);
      expect(result.code, args.join(' ')).toBe(64);
      expect(result.stderr).toMatch(/^twylt scan: .+\nRun "twylt scan --help" for usage\.\n$/);
    }
  });

  it('says in --help that a scan runs code from the folder', async () => {
    const result = await scan(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('A scan EXECUTES CODE FROM THE FOLDERS');
  });
});
