/**
 * Packs in the published format (tests/fixtures/packs/published: three packs laid out as the
 * published TWYLT packs are, their `twylt` library a stand-in found through PYTHONPATH):
 * scan -> --install -> catalog -> `twylt-mcp --scan` serving every tool with the
 * environments that install made; a manifest with mistakes; a pack whose shared code changes.
 * The install reaches the machine's pip index (tomli-w), as install.test.ts does.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../packages/twylt/src/toolset/config.js';
import { BRIDGE_CLI, bridgeEnv, startBridge } from '../support/mcp.js';
import { run } from '../support/process.js';
import { NO_PYTHON_REASON, noPython } from '../support/python.js';
import { PACKS, type Row, markers, scan, scanJson, scratch } from './support.js';

const dir = scratch('published');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const PUBLISHED = join(PACKS, 'published');
const PACK_NAMES = ['twylt-pack-basics', 'twylt-pack-data', 'twylt-pack-text'];
/** Where the packs' `twylt` library comes from: the environment the scan runs in. */
const LIBRARY = join(PACKS, 'pylib');
const SLOW = 300_000;

const byName = <T extends { name: string | null }>(rows: Map<string, T>) => new Map([...rows.values()].map((row) => [row.name, row]));

describe.skipIf(noPython)(`packs in the published format${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  const envs = join(dir, 'envs');
  const env = { PYTHONPATH: LIBRARY, TWYLT_ENVS_DIR: envs, TWYLT_TEST_MARKER_DIR: dir };

  it(
    'scan to ok tools with their packs as categories; --install takes the pack’s requirements.txt and keeps the scan’s PYTHONPATH behind the new folder',
    async () => {
      const first = await scanJson([...PACK_NAMES.map((name) => join(PUBLISHED, name))], env);
      expect(first.code, first.stderr).toBe(1);
      const rows = byName(first.rows);
      expect([...rows.keys()].sort()).toEqual(['count_words', 'echo', 'reverse', 'sleep', 'to_json', 'to_toml', 'upper']);
      expect(rows.get('echo')).toMatchObject({ status: 'ok', category: 'twylt-pack-basics', pack: { name: 'twylt-pack-basics', version: '0.3.0' } });
      expect(rows.get('echo')!.command.at(-1)).toMatch(/\/tools\/echo\/run\.py$/);
      // Its bootstrap is listed but not shipped: the entry point itself runs.
      expect(rows.get('sleep')).toMatchObject({ status: 'ok', category: 'twylt-pack-basics' });
      expect(rows.get('sleep')!.command.at(-1)).toMatch(/\/tools\/sleep\/tool\.py$/);
      expect(rows.get('upper')).toMatchObject({ status: 'ok', category: 'twylt-pack-text' });
      // The tool publishes a list naming its own unpublished pack; the pack's requirements.txt is what installs.
      expect(rows.get('to_toml')).toMatchObject({ status: 'needs_install', category: 'twylt-pack-data' });
      expect(rows.get('to_toml')!.reason).toMatch(/ -- tomli-w==1\.2\.0$/);
      expect(markers(dir)).toEqual([]); // the packs' tests/ are never run

      const catalog = join(dir, 'catalog.json');
      const installed = await scanJson([...PACK_NAMES.map((name) => join(PUBLISHED, name)), '--install', '--write', catalog], env);
      expect(installed.code, installed.stderr).toBe(0);
      const toToml = byName(installed.rows).get('to_toml')!;
      expect(toToml.status).toBe('ok');
      const [folder, ...rest] = toToml.env!.PYTHONPATH!.split(delimiter);
      expect(folder).toMatch(new RegExp(`^${envs}/pip-[0-9a-f]{16}$`));
      expect(rest).toEqual([LIBRARY]);
      const entries = parseConfig(readFileSync(catalog, 'utf8'), catalog);
      expect(entries.map((entry) => entry.category).sort()).toEqual([
        'twylt-pack-basics',
        'twylt-pack-basics',
        'twylt-pack-basics',
        'twylt-pack-data',
        'twylt-pack-data',
        'twylt-pack-text',
        'twylt-pack-text',
      ]);
      expect(entries.find((entry) => entry.source?.endsWith('to_toml/run.py'))!.env).toEqual(toToml.env);
    },
    SLOW,
  );

  it(
    'are all served by twylt-mcp --scan, with the environment twylt scan --install made',
    async () => {
      const bridge = await startBridge([...PACK_NAMES.flatMap((name) => ['--scan', join(PUBLISHED, name)]), '--describe-timeout', '20000'], env);
      try {
        const { tools } = await bridge.client.listTools();
        expect(tools.map((tool) => tool.name).sort(), bridge.stderr()).toEqual(['count_words', 'echo', 'reverse', 'sleep', 'to_json', 'to_toml', 'upper']);
        expect((await bridge.client.callTool({ name: 'to_toml', arguments: { data: { a: 1 } } })).structuredContent).toEqual({ text: 'a = 1\n' });
        expect((await bridge.client.callTool({ name: 'count_words', arguments: { text: 'one two three' } })).structuredContent).toEqual({ count: 3 });
        expect(bridge.stderr()).not.toContain('left out');
      } finally {
        await bridge.close();
      }
    },
    SLOW,
  );

  it(
    'without that environment, --scan names a command that exists',
    async () => {
      // Both tools declare tomli-w: to_json describes without it (it imports it lazily), but
      // is left out too, as needing what it declares (issue 36), and nothing is left to serve.
      const bridge = await run([process.execPath, BRIDGE_CLI, '--scan', join(PUBLISHED, 'twylt-pack-data'), '--describe-timeout', '20000'], { env: { ...bridgeEnv(), ...env, TWYLT_ENVS_DIR: join(dir, 'no-envs') }, timeoutMs: 60_000 });
      expect(bridge.code, bridge.stderr).toBe(1);
      expect(bridge.stderr).toContain(
        `left out ${join(PUBLISHED, 'twylt-pack-data/tools/to_toml/run.py')} (needs_install): its dependencies are missing; \`twylt scan --install ${join(PUBLISHED, 'twylt-pack-data')}\` installs them`,
      );
      expect(bridge.stderr).toMatch(/left out \S*to_json\S* \(needs_install\): it declares tomli-w==1\.2\.0, not installed for /);
      expect(bridge.stderr).not.toContain('with --install');
    },
    SLOW,
  );
});

describe.skipIf(noPython)(`a manifest with mistakes${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  it('is one failed row per bad entry, naming the field; the good entries are scanned', async () => {
    const pack = join(dir, 'mistakes');
    cpSync(join(PUBLISHED, 'twylt-pack-basics'), pack, { recursive: true });
    // A folder elsewhere, reached through a link inside the pack.
    const elsewhere = join(dir, 'elsewhere');
    cpSync(join(PUBLISHED, 'twylt-pack-basics/tools/reverse'), elsewhere, { recursive: true });
    symlinkSync(elsewhere, join(pack, 'tools', 'linked'), 'dir');
    const manifest = JSON.parse(readFileSync(join(pack, 'manifest.json'), 'utf8'));
    manifest.tools = [
      manifest.tools[0], // echo: good
      { name: 'numbered', entrypoint: 42 },
      { name: 'nowhere', description: 'no entry point' },
      { name: 'climbing', entrypoint: '../../etc/tool.py' },
      { name: 'linked', entrypoint: 'tools/linked/tool.py', bootstrap: 'tools/linked/run.py' },
      { name: 'ghost', entrypoint: 'tools/ghost/tool.py' },
      { name: 'badboot', entrypoint: 'tools/sleep/tool.py', bootstrap: 7 },
      'tools/reverse', // the older form: still read
      { name: 'sleep', entrypoint: 'tools/sleep/tool.py', 'x-future': { anything: true } }, // unknown fields ignored
    ];
    writeFileSync(join(pack, 'manifest.json'), JSON.stringify(manifest));
    // Not scanJson: its rows are by file, and every manifest row has the manifest's.
    const result = await scan(['--json', pack], { PYTHONPATH: LIBRARY });
    expect(result.code).toBe(1);
    // Until a tool has described itself, its row has the manifest's name and description.
    const all = (JSON.parse(result.stdout) as { tools: Row[] }).tools;
    const rows = new Map(all.map((row) => [row.source, row]));
    const manifestFile = join(pack, 'manifest.json');
    const problems = all.filter((row) => row.source === manifestFile).map((row) => row.reason);
    expect(problems).toEqual([
      `${manifestFile}: tools[1] ("numbered"): "entrypoint" must be a string, got 42`,
      `${manifestFile}: tools[2] ("nowhere"): a listed tool needs "entrypoint" (or "path")`,
      `${manifestFile}: tools[3] ("climbing"): "entrypoint" "../../etc/tool.py" is outside the pack`,
      `${manifestFile}: tools[4] ("linked"): "entrypoint" "tools/linked/tool.py" leads outside the pack (to ${join(elsewhere, 'tool.py')})`,
      `${manifestFile}: tools[5] ("ghost"): the listed tool's entrypoint "tools/ghost/tool.py" does not exist`,
      `${manifestFile}: tools[6] ("badboot"): "bootstrap" must be a string, got 7`,
    ]);
    expect(byName(rows).get('echo')!.status).toBe('ok');
    expect(all.find((row) => row.reason.includes('tools[2]'))).toMatchObject({ name: 'nowhere', description: 'no entry point' });
    expect(byName(rows).get('reverse')!.status).toBe('ok');
    expect(byName(rows).get('sleep')!.status).toBe('ok');
    // Nothing outside the pack was described or written: no row has a source there.
    expect(all.filter((row) => row.source.startsWith(elsewhere) || row.source.includes('/linked/'))).toEqual([]);
  });

  it('of another protocol runs none of its tools, and says so', async () => {
    const pack = join(dir, 'future');
    mkdirSync(pack, { recursive: true });
    cpSync(join(PUBLISHED, 'twylt-pack-basics/tools'), join(pack, 'tools'), { recursive: true });
    writeFileSync(join(pack, 'manifest.json'), JSON.stringify({ name: 'future', protocol: 'TWYLT 2', tools: [{ name: 'echo', entrypoint: 'tools/echo/tool.py' }] }));
    const { code, rows } = await scanJson([pack], { PYTHONPATH: LIBRARY });
    expect(code).toBe(1);
    expect([...rows.values()].map((row) => [row.status, row.reason])).toEqual([
      ['failed', `${join(pack, 'manifest.json')}: "protocol" is "TWYLT 2": this scan reads packs of "TWYLT 1"; none of its tools was run`],
    ]);
  });
});

describe.skipIf(noPython)(`a pack whose shared code changes${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  it('is described again by the consumer of its catalog', async () => {
    const pack = join(dir, 'changing');
    cpSync(join(PUBLISHED, 'twylt-pack-text'), pack, { recursive: true });
    const catalog = join(dir, 'changing-catalog.json');
    const env = { PYTHONPATH: LIBRARY };
    expect((await scanJson([pack, '--write', catalog], env)).code).toBe(0);
    const describedAs = async () => {
      const bridge = await startBridge(['--config', catalog], env);
      try {
        return (await bridge.client.listTools()).tools.find((tool) => tool.name === 'count_words')!.description;
      } finally {
        await bridge.close();
      }
    };
    expect(await describedAs()).toContain('Count the words of a text (split on white space).');
    // Only shared/ changes: the tool's own folder is as it was.
    const shared = join(pack, 'shared', 'text_common', '__init__.py');
    writeFileSync(shared, readFileSync(shared, 'utf8').replace('(split on white space)', '(split on white space, changed)'));
    expect(await describedAs()).toContain('Count the words of a text (split on white space, changed).');
  }, 120_000);
});
