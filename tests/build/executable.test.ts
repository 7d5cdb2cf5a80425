/**
 * `twylt build --executable` and `--snapshot-blob`: the tool evaluated into a V8 startup
 * snapshot, in one binary with Node or as a blob for `node --snapshot-blob`. They answer
 * exactly as the unbuilt tool; a tool whose module a snapshot cannot carry fails to build,
 * saying why; and the command says exactly what to install when its optional peer
 * dependencies are missing. The echo executable (a copy of Node, about 100 MB) is built
 * once; the other cases use the blob, which is the same snapshot without the copy.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, example, run, type Finished } from '../support/process.js';
import { MATRIX, freshDir, observe } from './matrix.js';
import { TWYLT, build } from './singles.js';

const dir = freshDir();
const echo = join(dir, 'echo');
const echoBlob = join(dir, 'echo.blob');
let built: Finished;
const cleanups: string[] = [dir];

beforeAll(async () => {
  built = await build(join(ROOT, 'examples/echo/tool.ts'), echo, ['--executable']);
  expect(built.code, built.stderr).toBe(0);
  const blob = await build(join(ROOT, 'examples/echo/tool.ts'), echoBlob, ['--snapshot-blob']);
  expect(blob.code, blob.stderr).toBe(0);
}, 300_000);
afterAll(() => {
  for (const path of cleanups) rmSync(path, { recursive: true, force: true });
});

/** A directory of its own for one test's build, removed at the end. */
function scratch(): string {
  const path = freshDir();
  cleanups.push(path);
  return path;
}

// `--`: without a script, Node would take a leading -v or --help as its own option.
const fromBlob = (blob: string) => [process.execPath, '--snapshot-blob', blob, '--'];

describe('twylt build --executable, the command', () => {
  it('writes one executable binary and says what it weighs and how long it took', () => {
    expect(built.stdout).toBe('');
    expect(built.stderr).toMatch(/^twylt build: wrote .*echo \(\d+\.\d MiB executable, \d+\.\d s, echo 1\.0\.0\)\n$/);
    const stat = statSync(echo);
    expect(stat.mode & 0o777).toBe(0o755);
    // A copy of Node with the snapshot in it: an ELF file at least as large as Node.
    expect(stat.size).toBeGreaterThan(statSync(process.execPath).size);
    expect(readFileSync(echo).subarray(0, 4)).toEqual(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
    // Nothing else is left beside it: no work directory, no temporary file.
    expect(readdirSync(dir).sort()).toEqual(['echo', 'echo.blob']);
  });

  it('runs without node on PATH or any node_modules, from any directory', async () => {
    const result = await run([echo, '{"text": "alone"}'], { cleanEnv: true, env: { PATH: '/nonexistent' }, cwd: scratch() });
    expect(result).toMatchObject({ code: 0, stdout: '{\n  "text": "alone"\n}\n', stderr: '' });
  });

  it('no warning about experimental features reaches stderr, whatever the run does', async () => {
    for (const args of [['{"text": "hi"}'], ['{"describe": "json_spec"}'], ['{"text": 5}'], ['--help']]) {
      const result = await run([echo, ...args], { cwd: scratch() });
      expect(result.stderr, args[0]).not.toMatch(/warning|experimental/i);
    }
  });

  const node20 = process.versions.node.startsWith('20.');
  it(`Node's own options in NODE_OPTIONS work; V8's ${node20 ? 'make Node 20 refuse the snapshot, exit 14' : 'work too (Node 22 and later)'}`, async () => {
    const plain = await run([echo, '{"text": "hi"}'], { cwd: scratch(), env: { NODE_OPTIONS: '--no-warnings --enable-source-maps' } });
    expect(plain).toMatchObject({ code: 0, stdout: '{\n  "text": "hi"\n}\n', stderr: '' });
    const v8Flag = await run([echo, '{"text": "hi"}'], { cwd: scratch(), env: { NODE_OPTIONS: '--max-old-space-size=512' } });
    if (node20) {
      // Node 20's V8 checks that a snapshot is deserialised with the flags it was made with.
      expect(v8Flag).toMatchObject({ code: 14, stdout: '' });
      expect(v8Flag.stderr).toContain('Invalid snapshot data in single executable binary');
    } else {
      expect(v8Flag).toMatchObject({ code: 0, stdout: '{\n  "text": "hi"\n}\n', stderr: '' });
    }
  });

  it('--executable with --snapshot-blob is wrong usage: exit 64, nothing written', async () => {
    const out = scratch();
    const result = await build(join(ROOT, 'examples/echo/tool.ts'), join(out, 'x'), ['--executable', '--snapshot-blob']);
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('not both');
    expect(readdirSync(out)).toEqual([]);
  });

  it('--help describes both kinds and what other platforms need', async () => {
    const help = (await run([...TWYLT, 'build', '--help'])).stdout;
    for (const text of ['--executable', '--snapshot-blob', 'node --snapshot-blob out.blob -- [args]', 'codesign', 'Windows', 'postject']) expect(help).toContain(text);
  });
});

describe('an executable and a snapshot blob answer exactly as the unbuilt tool', () => {
  for (const [label, command] of [['executable', [echo]], ['snapshot blob', fromBlob(echoBlob)]] as const) {
    describe(label, () => {
      for (const [name, c] of Object.entries(MATRIX)) {
        it(`the same exit code, stdout, stderr and output.json: ${name}`, async () => {
          const [unbuilt, snapshot] = await Promise.all([observe(example('echo'), c), observe([...command], c)]);
          expect(snapshot).toEqual(unbuilt);
        });
      }
    });
  }
});

describe('what the snapshot holds', () => {
  it("import.meta is the file written, where it was written: the module ran there, at build time", async () => {
    const out = join(scratch(), 'where.blob');
    expect((await build(join(ROOT, 'tests/build/fixtures/where_am_i.ts'), out, ['--snapshot-blob'])).code).toBe(0);
    const result = await run([...fromBlob(out), '{}'], { cwd: scratch() });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ url: pathToFileURL(out).href, filename: out, dirname: join(out, '..') });
  });

  it("the module's top-level side effects happen once, at build time, never on a call", async () => {
    const out = join(scratch(), 'marker.blob');
    expect((await build(join(ROOT, 'tests/build/fixtures/import_marker.ts'), out, ['--snapshot-blob'])).code).toBe(0);
    const work = scratch();
    for (const input of ['{"n": 3}', '{"describe": "json_spec"}']) {
      const result = await run(fromBlob(out), { cwd: work, input });
      expect(result.code, input).toBe(0);
    }
    expect(existsSync(join(work, 'imported.txt'))).toBe(false);
  });
});

describe('building the snapshot runs the validation path on the few-shot examples, never biz', () => {
  it('biz runs on a call only', async () => {
    const out = join(scratch(), 'marker.blob');
    const marker = join(scratch(), 'biz-ran.txt');
    const result = await build(join(ROOT, 'tests/build/fixtures/biz_marker.ts'), out, ['--snapshot-blob'], { BIZ_MARKER: marker });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(marker)).toBe(false);
    const called = await run([...fromBlob(out), '{"n": 2}'], { cwd: scratch(), env: { BIZ_MARKER: marker } });
    expect(called).toMatchObject({ code: 0, stdout: '{\n  "n": 2\n}\n', stderr: '' });
    expect(readFileSync(marker, 'utf8')).toBe('biz ran');
  });
});

describe('a tool a snapshot cannot carry fails to build, saying why; nothing is written', () => {
  const unsnapshottable = join(ROOT, 'tests/build/fixtures/unsnapshottable.ts');
  const refused = async (trap: string, reason: string | RegExp, kind = '--snapshot-blob', env: Record<string, string> = {}) => {
    const out = scratch();
    const result = await build(unsnapshottable, join(out, 'tool'), [kind], { SNAPSHOT_TRAP: trap, ...env });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/^twylt build: The tool cannot be snapshotted: /);
    expect(result.stderr).toMatch(reason);
    expect(readdirSync(out)).toEqual([]);
  };

  it('a timer left running', () => refused('interval', 'left work running when it was evaluated (Timeout)'));
  it('a server listening', () => refused('server', 'left work running when it was evaluated (TCPServerWrap)'));
  it('a read still pending', () => refused('read', 'left work running when it was evaluated (FSReqCallback)'));
  it('a file descriptor left open', () => refused('descriptor', /left file descriptors open \(\d+ -> \/dev\/null\)/));
  it('a module loaded from disk by a computed name', () => refused('computed-require', 'Cannot load "zod" from disk'));
  it('the same refusal for --executable, before Node is copied', () => refused('interval', '(Timeout)', '--executable'));

  const addon = compileAddon();
  it.skipIf(addon === undefined)(`a native addon${addon === undefined ? ' (skipped: no C compiler or Node headers to make one)' : ''}`, () =>
    refused('addon', `Cannot load the native addon ${addon}: a startup snapshot cannot hold one`, '--snapshot-blob', { SNAPSHOT_TRAP_ADDON: addon! }),
  );

  it('a tool that needs an ES module (top-level await)', async () => {
    const out = scratch();
    const result = await build(join(ROOT, 'tests/build/fixtures/module_only.ts'), join(out, 'tool'), ['--executable']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('needs an ES module (top-level await, or import.meta other than url, filename and dirname), and a startup snapshot evaluates CommonJS only');
    expect(readdirSync(out)).toEqual([]);
  });

  it('a module that tries an optional module and goes on without it builds, and runs without it', async () => {
    const out = join(scratch(), 'optional.blob');
    const result = await build(unsnapshottable, out, ['--snapshot-blob'], { SNAPSHOT_TRAP: 'optional-require' });
    expect(result.code, result.stderr).toBe(0);
    const called = await run([...fromBlob(out), '{}'], { cwd: scratch() });
    expect(called).toMatchObject({ code: 0, stdout: '{\n  "trap": "optional-require",\n  "loaded": false\n}\n', stderr: '' });
  });
});

/** A minimal Node-API addon, compiled here; undefined when this machine cannot. */
function compileAddon(): string | undefined {
  const headers = join(process.execPath, '../../include/node');
  if (!existsSync(join(headers, 'node_api.h'))) return undefined;
  const out = scratch();
  const source = join(out, 'addon.c');
  writeFileSync(source, '#include <node_api.h>\nstatic napi_value init(napi_env env, napi_value exports) { return exports; }\nNAPI_MODULE(NODE_GYP_MODULE_NAME, init)\n');
  try {
    execFileSync('cc', ['-shared', '-fPIC', `-I${headers}`, source, '-o', join(out, 'addon.node')], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  return join(out, 'addon.node');
}

describe('esbuild and postject are optional peer dependencies: a build without them says what to install', () => {
  // twylt as a project installs it without its optional peers: the package's files in a
  // node_modules of its own, where neither esbuild nor postject can be resolved.
  const project = scratch();
  const twylt = join(project, 'node_modules/twylt');
  mkdirSync(twylt, { recursive: true });
  cpSync(join(ROOT, 'packages/twylt/package.json'), join(twylt, 'package.json'));
  cpSync(join(ROOT, 'packages/twylt/dist'), join(twylt, 'dist'), { recursive: true });
  const peers = (JSON.parse(readFileSync(join(twylt, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }).peerDependencies;
  const buildIn = (options: string[]) => run([process.execPath, join(twylt, 'dist/cli/main.js'), 'build', join(ROOT, 'examples/echo/tool.ts'), '-o', join(project, 'out'), ...options], { cwd: project });

  it('no esbuild: twylt build names it and the exact install command, exit 1', async () => {
    const result = await buildIn([]);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toBe(
      `twylt build: esbuild is not installed: an optional peer dependency of twylt that only \`twylt build\` needs (a tool's run never uses it). Install with:\n  npm install --save-dev "esbuild@${peers.esbuild}"\n`,
    );
    expect(existsSync(join(project, 'out'))).toBe(false);
  });

  it('neither: --executable names both', async () => {
    const result = await buildIn(['--executable']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`esbuild and postject are not installed: optional peer dependencies of twylt that only \`twylt build --executable\` needs`);
    expect(result.stderr).toContain(`  npm install --save-dev "esbuild@${peers.esbuild}" "postject@${peers.postject}"\n`);
  });

  it('esbuild alone: --executable names postject only', async () => {
    symlinkSync(join(ROOT, 'node_modules/esbuild'), join(project, 'node_modules/esbuild'));
    const result = await buildIn(['--executable']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('twylt build: postject is not installed');
    expect(result.stderr).toContain(`  npm install --save-dev "postject@${peers.postject}"\n`);
    expect(result.stderr).not.toContain('esbuild@');
  });

  it('the published package lists them as optional peers and not as dependencies', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages/twylt/package.json'), 'utf8'));
    for (const name of ['esbuild', 'postject']) {
      expect(manifest.dependencies?.[name], name).toBeUndefined();
      expect(manifest.peerDependencies[name], name).toBeDefined();
      expect(manifest.peerDependenciesMeta[name], name).toEqual({ optional: true });
    }
  });
});
