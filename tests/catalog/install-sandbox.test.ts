/**
 * `twylt scan --install --sandbox` runs pip and npm in a sandbox of their own (ADR 0032):
 * real bwrap, real pip (the machine's configured indexes) and npm (its registry, reached
 * through the sandbox's filtering proxy). A pack's Python and npm requirements install and
 * its tools are `ok` and callable; requirements whose installs run code (a local sdist's
 * setup.py, an npm postinstall with --allow-install-scripts) try to write into HOME, read a
 * secret beside the pack and reach a loopback server: all three fail with --sandbox and all
 * three work without it, as in tests/sandbox/hostile.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_PYTHON_REASON, noPython, python } from '../support/python.js';
import { runTwylt } from '../support/twylt-cli.js';
import { SANDBOX_SKIP_REASON } from '../sandbox/support.js';
import { PACKS, type Row, scanJson, scratch } from './support.js';

const dir = scratch('install-sandbox');
/** The HOME of every scan here: where hostile install code would leave its marker. */
const home = join(dir, 'home');
const secret = join(dir, 'secret.txt');
const SECRET = 'hunter2-install-secret';
/** Installs reach the machine's indexes and the npm registry. */
const SLOW = 300_000;
let server: Server;
let hits = 0;
let port = 0;

beforeAll(async () => {
  mkdirSync(home, { recursive: true });
  writeFileSync(secret, SECRET);
  server = createServer((_request, response) => {
    hits += 1;
    response.end('reached');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as { port: number }).port;
});
afterAll(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const skip = SANDBOX_SKIP_REASON ?? (noPython ? NO_PYTHON_REASON : undefined);

/** The smallest TWYLT tool in Python: describes with empty schemas until `module` imports, then calls `body(data)`. */
function pythonTool(folder: string, name: string, requirements: string, module: string, body: string): void {
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'tool.py'),
    `import json, os, sys
REQUIREMENTS = {"tool": "pip", "format": "requirements.txt", "content": ${JSON.stringify(requirements)}}
SCHEMA = {"type": "object", "properties": {}, "additionalProperties": True}
try:
    import ${module}
    loaded = True
except ImportError:
    loaded = False
data = json.loads(sys.argv[-1]) if len(sys.argv) > 1 else {}
if os.environ.get("INPUT_DESCRIBE") or data.get("describe"):
    spec = {"format_version": "1.8", "name": ${JSON.stringify(name)}, "version": "1.0.0", "description": "d", "requirements": REQUIREMENTS,
            "inputSchema": SCHEMA if loaded else {}, "outputSchema": SCHEMA if loaded else {}, "few_shots": []}
    print(json.dumps(spec))
    sys.exit(0)
print(json.dumps(${body}))
`,
  );
}

/** The same in JavaScript, with npm `dependencies`. */
function nodeTool(folder: string, name: string, dependencies: Record<string, string>, module: string, body: string): void {
  mkdirSync(folder, { recursive: true });
  const requirements = { tool: 'npm', format: 'package.json', content: JSON.stringify({ dependencies }) };
  writeFileSync(
    join(folder, 'tool.mjs'),
    `import { createRequire } from 'node:module';
let lib;
try { lib = createRequire(import.meta.url)(${JSON.stringify(module)}); } catch {}
const schema = { type: 'object', properties: {}, additionalProperties: true };
const data = process.argv.length > 2 ? JSON.parse(process.argv.at(-1)) : {};
if (process.env.INPUT_DESCRIBE || data.describe) {
  console.log(JSON.stringify({ format_version: '1.8', name: ${JSON.stringify(name)}, version: '1.0.0', description: 'd',
    requirements: ${JSON.stringify(requirements)}, inputSchema: lib ? schema : {}, outputSchema: lib ? schema : {}, few_shots: [] }));
} else {
  console.log(JSON.stringify(${body}));
}
`,
  );
}

/** Python that writes `marker` into HOME, reads the secret and GETs the loopback server, and says how each went in `report`. */
function hostilePython(marker: string): string {
  return `import json, os, urllib.request
def attempt(action):
    try:
        return action()
    except Exception as error:
        return "refused: %s" % type(error).__name__
def write_marker():
    with open(${JSON.stringify(join(home, marker))}, "w") as out:
        out.write("install code ran with your rights")
    return "written"
def read_secret():
    with open(${JSON.stringify(secret)}) as source:
        return source.read()
def fetch():
    with urllib.request.urlopen("http://127.0.0.1:${port}/", timeout=20) as answer:
        return answer.read().decode()
report = {"home": attempt(write_marker), "secret": attempt(read_secret), "net": attempt(fetch)}
`;
}

/** A local sdist (in `folder`) whose setup.py runs the hostile code and installs its report as a module. */
function hostileSdist(folder: string): string {
  const source = join(folder, 'src');
  mkdirSync(source, { recursive: true });
  writeFileSync(
    join(source, 'setup.py'),
    `${hostilePython('pwned-by-setup-py')}
with open("twylt_hostile_report.py", "w") as out:
    out.write("REPORT = %r\\n" % json.dumps(report))
from setuptools import setup
setup(name="twylt-hostile", version="1.0.0", py_modules=["twylt_hostile_report"])
`,
  );
  execFileSync(python!, ['-c', 'import sys, tarfile; t = tarfile.open(sys.argv[1], "w:gz"); t.add(sys.argv[2], "twylt-hostile-1.0.0"); t.close()', join(folder, 'twylt-hostile-1.0.0.tar.gz'), source]);
  return join(folder, 'twylt-hostile-1.0.0.tar.gz');
}

/** A local npm tarball (in `folder`) whose postinstall does the same in JavaScript and leaves its report in the package. */
function hostileTarball(folder: string): string {
  const pkg = join(folder, 'pkg');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    join(pkg, 'hostile.js'),
    `const fs = require('node:fs');
const attempt = (action) => { try { return action(); } catch (error) { return 'refused: ' + error.code; } };
const report = {
  home: attempt(() => { fs.writeFileSync(${JSON.stringify(join(home, 'pwned-by-postinstall'))}, 'install code ran with your rights'); return 'written'; }),
  secret: attempt(() => fs.readFileSync(${JSON.stringify(secret)}, 'utf8')),
};
fetch('http://127.0.0.1:${port}/').then((answer) => answer.text(), (error) => 'refused: ' + (error.cause?.code ?? error.name))
  .then((net) => fs.writeFileSync('report.json', JSON.stringify({ ...report, net })));
`,
  );
  writeFileSync(join(pkg, 'index.js'), "module.exports = require('./report.json');\n");
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'twylt-hostile', version: '1.0.0', main: 'index.js', scripts: { postinstall: 'node hostile.js' } }));
  const name = execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', folder], { cwd: pkg, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n').at(-1)!;
  return join(folder, name);
}

/**
 * `twylt scan --json ARGS` with HOME set to the test's home, npm's cache in it (npx, which
 * runs vitest, names the real one); pip's user configuration (this machine's local indexes)
 * is still found where it is (XDG_CONFIG_HOME).
 */
function scan(args: string[]) {
  const env = { HOME: home, npm_config_cache: join(home, '.npm'), XDG_CACHE_HOME: join(home, '.cache'), TWYLT_ENVS_DIR: '' };
  return scanJson(args, { ...env, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config') });
}

function byName(rows: Map<string, Row>): Map<string | null, Row> {
  return new Map([...rows.values()].map((row) => [row.name, row]));
}

/** Call a scanned tool as its catalog entry would: its command in its folder, its environment added. */
async function call(row: Row, input: object): Promise<unknown> {
  const result = await runTwylt(['call', '--json', '--input', JSON.stringify(input), '--', ...row.command], { cwd: row.cwd, env: row.env ?? {} });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

describe.skipIf(skip !== undefined)(`scan --install --sandbox${skip ? `: skipped, ${skip}` : ''}`, () => {
  it(
    'installs a pip and an npm requirement in the sandbox: both tools ok and callable; a failing install is its tool’s failed row',
    async () => {
      const pack = join(dir, 'good');
      pythonTool(join(pack, 'to_toml'), 'to_toml', 'tomli-w==1.2.0\n', 'tomli_w', '{"toml": tomli_w.dumps(data)}');
      nodeTool(join(pack, 'slug'), 'slug', { slugify: '1.6.6' }, 'slugify', '{ slug: lib(data.text, { lower: true }) }');
      const envs = join(dir, 'good-envs');
      const { code, rows, stderr } = await scan([pack, join(PACKS, 'unresolvable'), '--install', '--sandbox', '--envs', envs]);
      expect(code, stderr).toBe(1);
      const tools = byName(rows);
      expect(tools.get('to_toml'), stderr).toMatchObject({ status: 'ok', env: { PYTHONPATH: expect.stringContaining(envs) } });
      expect(tools.get('slug'), stderr).toMatchObject({ status: 'ok', env: { NODE_PATH: expect.stringContaining(envs) } });
      expect(await call(tools.get('to_toml')!, { a: 1 })).toEqual({ toml: 'a = 1\n' });
      expect(await call(tools.get('slug')!, { text: 'Hello Sandboxed World' })).toEqual({ slug: 'hello-sandboxed-world' });
      // pip's and npm's own lines, from inside the sandbox.
      expect(rows.get('unresolvable/pip/tool.py')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^installing its requirements failed: ERROR: .*twylt-tests-no-such-package==9\.9\.9/) });
      expect(rows.get('unresolvable/npm/tool.mjs')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^installing its requirements failed: npm error /) });
      // npm's package cache was private to the sandbox: none in the HOME of the scan.
      expect(existsSync(join(home, '.npm', '_cacache'))).toBe(false);
    },
    SLOW,
  );

  it(
    'install code from the pack (setup.py, an allowed postinstall) cannot write HOME, read a secret or reach a host with --sandbox; without it, it does all three',
    async () => {
      const pack = join(dir, 'hostile');
      const sdist = hostileSdist(join(pack, 'py'));
      pythonTool(join(pack, 'py'), 'hostile_py', `twylt-hostile @ ${pathToFileURL(sdist).href}\n`, 'twylt_hostile_report', 'json.loads(twylt_hostile_report.REPORT)');
      const tarball = hostileTarball(join(pack, 'js'));
      nodeTool(join(pack, 'js'), 'hostile_js', { 'twylt-hostile': `file:${tarball}` }, 'twylt-hostile', 'lib');
      const reports = async (args: string[]) => {
        const { rows, stderr } = await scan([pack, '--install', '--allow-install-scripts', ...args]);
        const tools = byName(rows);
        for (const name of ['hostile_py', 'hostile_js']) expect(tools.get(name)?.status, `${name}: ${tools.get(name)?.reason}\n${stderr}`).toBe('ok');
        return { py: await call(tools.get('hostile_py')!, {}), js: await call(tools.get('hostile_js')!, {}) };
      };

      const boxed = await reports(['--sandbox', '--envs', join(dir, 'hostile-envs-boxed')]);
      for (const report of [boxed.py, boxed.js]) expect(report).toEqual({ home: expect.stringMatching(/^refused: /), secret: expect.stringMatching(/^refused: /), net: expect.stringMatching(/^refused: /) });
      expect(existsSync(join(home, 'pwned-by-setup-py'))).toBe(false);
      expect(existsSync(join(home, 'pwned-by-postinstall'))).toBe(false);
      expect(hits).toBe(0);

      // The same installs without the sandbox: the code runs with the operator's rights.
      const plain = await reports(['--envs', join(dir, 'hostile-envs-plain')]);
      for (const report of [plain.py, plain.js]) expect(report).toEqual({ home: 'written', secret: SECRET, net: 'reached' });
      expect(readFileSync(join(home, 'pwned-by-setup-py'), 'utf8')).toBe('install code ran with your rights');
      expect(existsSync(join(home, 'pwned-by-postinstall'))).toBe(true);
      expect(hits).toBeGreaterThan(0);
    },
    SLOW,
  );
});
