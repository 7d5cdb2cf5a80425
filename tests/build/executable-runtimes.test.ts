/**
 * `twylt build --executable` on every runtime: built by Node 24 (its single executables and
 * snapshots), and with `--runtime bun` and `--runtime deno` (their own compilers). Each
 * executable answers like the tool's source; each is refused, with nothing written, when it
 * does not start and describe itself as the build's describe run did (the self-check before
 * the file appears); and a missing Bun or Deno, or a build run by Bun or Deno that asks for
 * a Node executable, is one clear message. Runtimes come from scripts/runtimes.mjs; a test
 * whose runtime is not installed is skipped, saying so.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, example, run } from '../support/process.js';
import { denortMissing, runtimeBinary, runtimeMissing } from '../support/runtimes.js';
import { QUICK_START_CALLS, casesNamed, freshDir, observe } from './matrix.js';

const CLI = join(ROOT, 'packages/twylt/dist/cli/main.js');
const ECHO = join(ROOT, 'examples/echo/tool.ts');
const START_DIFFERS = join(ROOT, 'tests/build/fixtures/start_differs.ts');
const BUILD_TIMEOUT_MS = 300_000;

const node24 = runtimeBinary('node24');
const bun = runtimeBinary('bun');
const deno = runtimeBinary('deno');
const noDenort = denortMissing();

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function scratch(): string {
  const dir = freshDir();
  dirs.push(dir);
  return dir;
}

/** PATH with the runtime's folder first: where `twylt build --runtime NAME` finds it. */
const pathWith = (binary: string | undefined) => `${binary === undefined ? '' : `${dirname(binary)}:`}${process.env.PATH ?? ''}`;

/** `twylt build` run by `runner` (Node 20 by default), with `env` added. */
function build(args: string[], env: Record<string, string> = {}, runner: string[] = [process.execPath], cwd?: string) {
  return run([...runner, CLI, 'build', ...args], { env, timeoutMs: BUILD_TIMEOUT_MS, cwd });
}

/** The cases the issue names: json_spec, a non-ASCII call, an invalid call, stdin, file mode, INPUT_DESCRIBE. */
const CASES = casesNamed(['describe json_spec on the CLI', 'describe json_spec through INPUT_DESCRIBE', 'describe brief on stdin', ...QUICK_START_CALLS]);

interface Target {
  label: string;
  skip: string | undefined;
  /** The options and environment of its build, and what runs the build. */
  options: string[];
  env: () => Record<string, string>;
  runner?: string[];
}

const TARGETS: Target[] = [
  { label: 'built by Node 24', skip: node24 ? undefined : runtimeMissing('node24'), options: ['--executable'], env: () => ({}), runner: node24 ? [node24] : undefined },
  { label: '--runtime bun', skip: bun ? undefined : runtimeMissing('bun'), options: ['--executable', '--runtime', 'bun'], env: () => ({ PATH: pathWith(bun) }) },
  {
    label: '--runtime deno',
    skip: deno ? noDenort : runtimeMissing('deno'),
    options: ['--executable', '--runtime', 'deno'],
    env: () => ({ PATH: pathWith(deno) }),
  },
];

for (const target of TARGETS) {
  describe.skipIf(target.skip !== undefined)(`an executable ${target.label}${target.skip ? ` (skipped: ${target.skip})` : ''}`, () => {
    const out = join(scratch(), 'echo');
    let built: Awaited<ReturnType<typeof build>> | undefined;
    const echo = async () => {
      built ??= await build([ECHO, '-o', out, ...target.options], target.env(), target.runner);
      expect(built.code, built.stderr).toBe(0);
      return [out];
    };

    it('is written, and says what it is', async () => {
      await echo();
      expect(built!.stderr).toMatch(/^twylt build: wrote .*echo \(\d+\.\d MiB (bun |deno )?executable, \d+\.\d s, echo 1\.0\.0\)\n$/);
      expect(readdirSync(dirname(out))).toEqual(['echo']);
    }, BUILD_TIMEOUT_MS);

    if (target.runner !== undefined) {
      // Node 20 refuses its snapshot with V8 options in NODE_OPTIONS (exit 14, executable.test.ts);
      // from Node 22 on the executable starts and the option applies.
      it('V8 options in NODE_OPTIONS: the executable runs', async () => {
        const result = await run([...(await echo()), '{"text": "hi"}'], { env: { NODE_OPTIONS: '--max-old-space-size=512 --expose-gc' }, cwd: scratch() });
        expect(result).toMatchObject({ code: 0, stdout: '{\n  "text": "hi"\n}\n', stderr: '' });
      }, BUILD_TIMEOUT_MS);
    }

    for (const [name, c] of Object.entries(CASES)) {
      it(`answers like the source: ${name}`, async () => {
        const [source, executable] = await Promise.all([observe(example('echo'), c), echo().then((command) => observe(command, c))]);
        expect(executable).toEqual(source);
      }, BUILD_TIMEOUT_MS);
    }
  });
}

describe('an executable that does not start as the build described the tool is refused; nothing is written', () => {
  // start_differs describes itself well as a file; its executables write to stderr at start
  // (Node) or fail to link a Node API the runtime lacks (Bun, Deno). Without the self-check
  // they would be written.
  const refused = async (options: string[], env: Record<string, string>, runner?: string[]) => {
    const out = scratch();
    const result = await build([START_DIFFERS, '-o', join(out, 'tool'), ...options], env, runner);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^twylt build: The (bun |deno )?executable was built but does not run as the tool \(.+\); nothing was written:\n/);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(readdirSync(out)).toEqual([]);
    return result.stderr;
  };

  it('its source describes itself (the build has nothing against it as a file)', async () => {
    const out = join(scratch(), 'start_differs.mjs');
    expect((await build([START_DIFFERS, '-o', out])).code).toBe(0);
    expect(existsSync(out)).toBe(true);
  }, BUILD_TIMEOUT_MS);

  it('Node: a deserialize callback that writes to stderr at every start', async () => {
    expect(await refused(['--executable'], {})).toContain('(it wrote to stderr)');
  }, BUILD_TIMEOUT_MS);

  it.skipIf(!bun)(`--runtime bun: a Node API Bun lacks${bun ? '' : ` (skipped: ${runtimeMissing('bun')})`}`, async () => {
    expect(await refused(['--executable', '--runtime', 'bun'], { PATH: pathWith(bun) })).toContain("Export named 'transferableAbortSignal' not found");
  }, BUILD_TIMEOUT_MS);

  it.skipIf(!deno || noDenort !== undefined)(`--runtime deno: a Node API Deno lacks${!deno ? ` (skipped: ${runtimeMissing('deno')})` : noDenort ? ` (skipped: ${noDenort})` : ''}`, async () => {
    expect(await refused(['--executable', '--runtime', 'deno'], { PATH: pathWith(deno) })).toContain('captureRejections');
  }, BUILD_TIMEOUT_MS);

  // Runs without denort too: a wrong base binary (the deno CLI itself, which takes the tool's
  // arguments for a script to run) makes an executable that does not answer.
  it.skipIf(!deno)(`--runtime deno with the wrong runtime binary under it${deno ? '' : ` (skipped: ${runtimeMissing('deno')})`}`, async () => {
    expect(await refused(['--executable', '--runtime', 'deno'], { PATH: pathWith(deno), DENORT_BIN: deno! })).toContain('(exit 1)');
  }, BUILD_TIMEOUT_MS);
});

describe('what is missing, or run where it cannot work, is one clear message and no file', () => {
  const fails = async (args: string[], env: Record<string, string>, runner?: string[]) => {
    const out = scratch();
    const result = await build([ECHO, '-o', join(out, 'tool'), ...args], env, runner);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(readdirSync(out)).toEqual([]);
    return result.stderr;
  };
  const peers = (JSON.parse(readFileSync(join(ROOT, 'packages/twylt/package.json'), 'utf8')) as { peerDependencies: Record<string, string> }).peerDependencies;

  for (const name of ['bun', 'deno'] as const) {
    it(`no ${name} on PATH or in node_modules/.bin: the exact install command`, async () => {
      // A PATH with no Bun or Deno (the build itself runs from process.execPath).
      const stderr = await fails(['--executable', '--runtime', name], { PATH: '/nonexistent' });
      expect(stderr).toBe(
        `twylt build: ${name} is not installed: an optional peer dependency of twylt that only \`twylt build --executable --runtime ${name}\` needs (a tool's run never uses it). Install with:\n  npm install --save-dev "${name}@${peers[name]}"\n`,
      );
    });
  }

  it.skipIf(!bun)(`bun in the working directory's node_modules/.bin is found without PATH (the bun npm package)${bun ? '' : ` (skipped: ${runtimeMissing('bun')})`}`, async () => {
    const project = scratch();
    mkdirSync(join(project, 'node_modules/.bin'), { recursive: true });
    symlinkSync(bun!, join(project, 'node_modules/.bin/bun'));
    const out = join(project, 'echo');
    const result = await build([ECHO, '-o', out, '--executable', '--runtime', 'bun'], { PATH: '/nonexistent' }, [process.execPath], project);
    expect(result.code, result.stderr).toBe(0);
    expect(await run([out, '{"text": "found"}'], { cwd: project })).toMatchObject({ code: 0, stdout: '{\n  "text": "found"\n}\n', stderr: '' });
  }, BUILD_TIMEOUT_MS);

  it('--runtime without --executable is wrong usage', async () => {
    const out = scratch();
    const result = await build([ECHO, '-o', join(out, 'tool'), '--runtime', 'bun']);
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('--runtime bun makes an executable: add --executable');
    const unknown = await build([ECHO, '-o', join(out, 'tool'), '--executable', '--runtime', 'java']);
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toContain('--runtime is node, bun or deno, not "java"');
    expect(readdirSync(out)).toEqual([]);
  });

  it.skipIf(!deno)(`deno compile without denort names DENORT_BIN${deno ? '' : ` (skipped: ${runtimeMissing('deno')})`}`, async () => {
    const stderr = await fails(['--executable', '--runtime', 'deno'], { PATH: pathWith(deno), DENORT_BIN: '/nonexistent/denort' });
    expect(stderr).toMatch(/^twylt build: deno compile could not get Deno's runtime binary \(denort\) of .*: give it one with DENORT_BIN=\/path\/to\/denort/);
  }, BUILD_TIMEOUT_MS);

  it.skipIf(!bun)(`run by Bun, --executable says to run the build with Node or use --runtime bun${bun ? '' : ` (skipped: ${runtimeMissing('bun')})`}`, async () => {
    const stderr = await fails(['--executable'], {}, [bun!]);
    expect(stderr).toMatch(/^twylt build: twylt build --executable makes a Node executable from the Node that runs the build, and this is Bun [\d.]+: run the build with Node \(npx twylt build \.\.\.\), or make a Bun executable with --executable --runtime bun\n$/);
  }, BUILD_TIMEOUT_MS);

  it.skipIf(!deno)(`run by Deno, --snapshot-blob says to run the build with Node${deno ? '' : ` (skipped: ${runtimeMissing('deno')})`}`, async () => {
    const stderr = await fails(['--snapshot-blob'], {}, [deno!, 'run', '-A']);
    expect(stderr).toMatch(/^twylt build: twylt build --snapshot-blob makes a Node snapshot from the Node that runs the build, and this is Deno [\d.]+: run the build with Node \(npx twylt build \.\.\.\)\n$/);
  }, BUILD_TIMEOUT_MS);

  it.skipIf(!bun)(`a .mjs built by Bun carries no code cache: about the size of one built by Node${bun ? '' : ` (skipped: ${runtimeMissing('bun')})`}`, async () => {
    const out = scratch();
    const [byNode, byBun] = [join(out, 'node.mjs'), join(out, 'bun.mjs')];
    expect((await build([ECHO, '-o', byNode])).code).toBe(0);
    expect((await build([ECHO, '-o', byBun], {}, [bun!])).code).toBe(0);
    // Node's file holds V8's code cache (about 120 KiB of base64); Bun's holds none.
    expect(statSync(byBun).size).toBeLessThan(statSync(byNode).size);
    const called = await run([process.execPath, byBun, '{"text": "hé"}']);
    expect(called).toMatchObject({ code: 0, stdout: '{\n  "text": "hé"\n}\n', stderr: '' });
  }, BUILD_TIMEOUT_MS);
});
