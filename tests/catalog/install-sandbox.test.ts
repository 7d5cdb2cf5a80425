/**
 * `twylt scan --install --sandbox` runs pip and npm in a sandbox of their own (ADR 0032):
 * real bwrap, real pip (the machine's configured indexes) and npm (its registry, reached
 * through the sandbox's filtering proxy). A pack's Python and npm requirements install and
 * its tools are `ok` and callable; requirements whose installs run code (a local sdist's
 * setup.py, an npm postinstall with --allow-install-scripts) try to write into HOME, read a
 * secret beside the pack and reach a loopback server: all three fail with --sandbox and all
 * three work without it, as in tests/sandbox/hostile.test.ts. That row runs as root and as
 * nobody (setpriv, from a world-readable copy of the built packages:
 * tests/support/unprivileged.ts), with nobody's own HOME and secret, which it can write and
 * read outside the sandbox.
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
import { AS_NOBODY, giveToNobody, pipConfigOf, UNPRIVILEGED_SKIP_REASON, type UnprivilegedCopy, unprivilegedCopy } from '../support/unprivileged.js';
import { SANDBOX_SKIP_REASON } from '../sandbox/support.js';
import { PACKS, type Row, scanJson, scratch } from './support.js';

const dir = scratch('install-sandbox');
/** The HOME of root's scans here: where hostile install code would leave its marker. */
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

/** Python that writes `marker` into the scanner's HOME, reads its secret and GETs the loopback server, and says how each went in `report`. */
function hostilePython(marker: string, as: Scanner): string {
  return `import json, os, urllib.request
def attempt(action):
    try:
        return action()
    except Exception as error:
        return "refused: %s" % type(error).__name__
def write_marker():
    with open(${JSON.stringify(join(as.home, marker))}, "w") as out:
        out.write("install code ran with your rights")
    return "written"
def read_secret():
    with open(${JSON.stringify(as.secret)}) as source:
        return source.read()
def fetch():
    with urllib.request.urlopen("http://127.0.0.1:${port}/", timeout=20) as answer:
        return answer.read().decode()
report = {"home": attempt(write_marker), "secret": attempt(read_secret), "net": attempt(fetch)}
`;
}

/** A local sdist (in `folder`) whose setup.py runs the hostile code and installs its report as a module. */
function hostileSdist(folder: string, as: Scanner): string {
  const source = join(folder, 'src');
  mkdirSync(source, { recursive: true });
  writeFileSync(
    join(source, 'setup.py'),
    `${hostilePython('pwned-by-setup-py', as)}
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
function hostileTarball(folder: string, as: Scanner): string {
  const pkg = join(folder, 'pkg');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    join(pkg, 'hostile.js'),
    `const fs = require('node:fs');
const attempt = (action) => { try { return action(); } catch (error) { return 'refused: ' + error.code; } };
const report = {
  home: attempt(() => { fs.writeFileSync(${JSON.stringify(join(as.home, 'pwned-by-postinstall'))}, 'install code ran with your rights'); return 'written'; }),
  secret: attempt(() => fs.readFileSync(${JSON.stringify(as.secret)}, 'utf8')),
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

/**
 * Who scans the hostile pack: root, with the checkout's twylt, or nobody, with a
 * world-readable copy of the built packages and a folder of its own in it (HOME, the secret,
 * the pack), never the checkout (issue 38).
 */
interface Scanner {
  readonly user: 'root' | 'nobody';
  /** argv of twylt, undefined for the checkout's. */
  readonly twylt?: readonly string[];
  readonly folder: string;
  readonly home: string;
  readonly secret: string;
  /** Where pip finds its user configuration (this machine's local indexes). */
  readonly configHome: string;
  readonly python: string;
}

const ROOT_SCANNER: Scanner = { user: 'root', folder: dir, home, secret, configHome: process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), python: python! };

/** The system's Python, which nobody can run (pyenv's lives under /root, 0700). */
const SYSTEM_PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : undefined;

/** nobody's scanner: its HOME, a secret only it can read, and root's pip configuration copied into its XDG_CONFIG_HOME (root's is under /root). */
function nobodyScanner(copy: UnprivilegedCopy): Scanner {
  const folder = copy.scratch('install-sandbox');
  const configHome = join(folder, 'home', '.config');
  mkdirSync(join(configHome, 'pip'), { recursive: true });
  writeFileSync(join(configHome, 'pip', 'pip.conf'), pipConfigOf(SYSTEM_PYTHON!));
  writeFileSync(join(folder, 'secret.txt'), SECRET, { mode: 0o600 });
  giveToNobody(folder);
  const twylt = [...AS_NOBODY, process.execPath, copy.path('packages/twylt/dist/cli/main.js')];
  return { user: 'nobody', twylt, folder, home: join(folder, 'home'), secret: join(folder, 'secret.txt'), configHome, python: SYSTEM_PYTHON! };
}

/** `twylt scan --json ARGS --python <the scanner's>` as the scanner, HOME and npm's cache its own: the rows by name. */
async function scanAs(as: Scanner, args: string[]): Promise<{ tools: Map<string | null, Row>; stderr: string }> {
  const env = { HOME: as.home, npm_config_cache: join(as.home, '.npm'), XDG_CACHE_HOME: join(as.home, '.cache'), XDG_CONFIG_HOME: as.configHome, TWYLT_ENVS_DIR: '', TWYLT_WORKSPACES_DIR: join(as.folder, 'workspaces') };
  const result = await runTwylt(['scan', '--json', ...args, '--python', as.python], { env, command: as.twylt });
  try {
    return { tools: new Map((JSON.parse(result.stdout) as { tools: Row[] }).tools.map((row) => [row.name, row])), stderr: result.stderr };
  } catch {
    throw new Error(`twylt scan printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
}

const SCANNERS = [
  { user: 'root', skip },
  { user: 'nobody', skip: skip ?? UNPRIVILEGED_SKIP_REASON ?? (SYSTEM_PYTHON ? undefined : 'no /usr/bin/python3, which nobody could run') },
] as const;

/** Call a scanned tool as its catalog entry would: its command in its folder, its environment added; as the scanner that scanned it. */
async function call(row: Row, input: object, as: Scanner = ROOT_SCANNER): Promise<unknown> {
  const result = await runTwylt(['call', '--json', '--input', JSON.stringify(input), '--', ...row.command], { cwd: row.cwd, env: row.env ?? {}, command: as.twylt });
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
});

for (const { user, skip: why } of SCANNERS) {
  describe.skipIf(why !== undefined)(`scan --install --sandbox of a hostile pack, scanned as ${user}${why ? `: skipped, ${why}` : ''}`, () => {
    let as: Scanner = ROOT_SCANNER;
    let copy: UnprivilegedCopy | undefined;
    beforeAll(() => {
      if (user === 'nobody') {
        copy = unprivilegedCopy();
        as = nobodyScanner(copy);
      }
    });
    afterAll(() => copy?.remove());

    it(
      'install code from the pack (setup.py, an allowed postinstall) cannot write HOME, read a secret or reach a host with --sandbox; without it, it does all three',
      async () => {
        const pack = join(as.folder, 'hostile');
        const sdist = hostileSdist(join(pack, 'py'), as);
        pythonTool(join(pack, 'py'), 'hostile_py', `twylt-hostile @ ${pathToFileURL(sdist).href}\n`, 'twylt_hostile_report', 'json.loads(twylt_hostile_report.REPORT)');
        const tarball = hostileTarball(join(pack, 'js'), as);
        nodeTool(join(pack, 'js'), 'hostile_js', { 'twylt-hostile': `file:${tarball}` }, 'twylt-hostile', 'lib');
        // The scanner's own pack and envs, as its HOME and secret are.
        if (as.user === 'nobody') giveToNobody(pack);
        hits = 0;
        const reports = async (args: string[]) => {
          const { tools, stderr } = await scanAs(as, [pack, '--install', '--allow-install-scripts', ...args]);
          for (const name of ['hostile_py', 'hostile_js']) expect(tools.get(name)?.status, `${name}: ${tools.get(name)?.reason}\n${stderr}`).toBe('ok');
          return { py: await call(tools.get('hostile_py')!, {}, as), js: await call(tools.get('hostile_js')!, {}, as) };
        };

        const boxed = await reports(['--sandbox', '--envs', join(as.folder, 'hostile-envs-boxed')]);
        for (const report of [boxed.py, boxed.js]) expect(report).toEqual({ home: expect.stringMatching(/^refused: /), secret: expect.stringMatching(/^refused: /), net: expect.stringMatching(/^refused: /) });
        expect(existsSync(join(as.home, 'pwned-by-setup-py'))).toBe(false);
        expect(existsSync(join(as.home, 'pwned-by-postinstall'))).toBe(false);
        expect(hits).toBe(0);

        // The same installs without the sandbox: the code runs with the scanner's rights.
        const plain = await reports(['--envs', join(as.folder, 'hostile-envs-plain')]);
        for (const report of [plain.py, plain.js]) expect(report).toEqual({ home: 'written', secret: SECRET, net: 'reached' });
        expect(readFileSync(join(as.home, 'pwned-by-setup-py'), 'utf8')).toBe('install code ran with your rights');
        expect(existsSync(join(as.home, 'pwned-by-postinstall'))).toBe(true);
        expect(hits).toBeGreaterThan(0);
      },
      SLOW,
    );
  });
}
