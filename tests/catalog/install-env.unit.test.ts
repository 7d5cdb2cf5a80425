/**
 * What an install may write, from the source (docs/mutation.md): installEnv fills a staging
 * folder (the installer's target and working directory), renames it into place and leaves
 * nothing else behind; a failed install is its installer's own line. With `--sandbox`
 * (InstallSandboxes), the installer's configuration is handed in as variables, its target is
 * one `--target=DIR` argument, the pack is readable and the staging folder is the one
 * writable folder: the real bwrap runs a stand-in installer that tries to write elsewhere.
 * The stand-in installers are Node.js scripts; no network, no pip.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { SpawnSandbox } from '../../packages/twylt/src/client/spawn.js';
import { sandboxRefusalChannel } from '../../packages/twylt/src/events/channels.js';
import { type EnvPlan, type InstallPlace, installEnv } from '../../packages/twylt/src/toolset/catalog/install.js';
import { InstallSandboxes } from '../../packages/twylt/src/toolset/catalog/sandboxed-install.js';
import { resolveSandboxPolicy } from '../../packages/twylt/src/toolset/sandbox/policy.js';
import { SANDBOX_SKIP_REASON } from '../sandbox/support.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-install-env-')));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A stand-in installer: a Node.js script. */
function installer(name: string, body: string): string {
  const file = join(scratch, 'bin', name);
  mkdirSync(join(scratch, 'bin'), { recursive: true });
  writeFileSync(file, `#!${process.execPath}\nconst fs = require('fs');\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

/** `promise`, or a rejection after `ms` of real time: a row whose installer never ends fails instead of hanging. */
function bounded<T>(promise: Promise<T>, ms = 15_000): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, fail) => realSetTimeout(() => fail(new Error(`not settled in ${ms} ms`)), ms).unref())]);
}
const realSetTimeout = globalThis.setTimeout;

/** Whether a process of that id runs (a reaped child is gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A fresh environments folder and a pip plan of `command` (its target: the plan's dir). */
function planOf(command: (dir: string) => string[], name = 'env'): { envs: string; plan: EnvPlan } {
  const envs = mkdtempSync(join(scratch, 'envs-'));
  const dir = join(envs, `pip-${name}`);
  return { envs, plan: { installer: 'pip', dir, command: command(dir), env: {} } };
}

/** Reads its stdin to the end and writes a lot to stdout, then records where it ran, its argv and two variables into its target (`--target DIR`), and counts its runs. */
const RECORDER = `const target = process.argv[process.argv.indexOf('--target') + 1];
fs.readFileSync(0); // its stdin ends (else it would wait forever)
fs.writeSync(1, 'x'.repeat(256 * 1024)); // more than a pipe holds: its stdout is read
fs.appendFileSync(process.env.RUNS_FILE ?? '/dev/null', 'run\\n');
fs.writeFileSync(target + '/record.json', JSON.stringify({ cwd: process.cwd(), argv: process.argv.slice(2), PIP_NO_INPUT: process.env.PIP_NO_INPUT ?? null, MARK: process.env.TWYLT_INSTALL_MARK ?? null }));`;

describe('installEnv: the staging folder, then the rename', () => {
  it('the installer runs in a fresh .staging-HEX folder (its target and its cwd) with the scan\'s variables and PIP_NO_INPUT; the folder becomes the environment, nothing else is left', async () => {
    const recorder = installer('recorder', RECORDER);
    const { envs, plan } = planOf((dir) => [recorder, '--target', dir]);
    const runs = join(scratch, 'runs');
    process.env.TWYLT_INSTALL_MARK = 'scan';
    process.env.RUNS_FILE = runs;
    try {
      expect(await installEnv(plan, envs)).toEqual({ ok: true, reused: false });
      const record = JSON.parse(readFileSync(join(plan.dir, 'record.json'), 'utf8'));
      expect(record.cwd).toMatch(new RegExp(`^${envs}/\\.staging-[0-9a-f]{12}$`));
      expect(record.argv).toEqual(['--target', record.cwd]);
      expect({ PIP_NO_INPUT: record.PIP_NO_INPUT, MARK: record.MARK }).toEqual({ PIP_NO_INPUT: '1', MARK: 'scan' });
      expect(readdirSync(envs)).toEqual(['pip-env']);
      // There already: reused, the installer not run again.
      expect(await installEnv(plan, envs)).toEqual({ ok: true, reused: true });
      expect(readFileSync(runs, 'utf8')).toBe('run\n');
    } finally {
      delete process.env.TWYLT_INSTALL_MARK;
      delete process.env.RUNS_FILE;
    }
  });

  it('the environments folder is made when missing', async () => {
    const recorder = installer('recorder2', RECORDER);
    const envs = join(scratch, 'not-yet', 'envs');
    const plan: EnvPlan = { installer: 'pip', dir: join(envs, 'pip-new'), command: [recorder, '--target', join(envs, 'pip-new')], env: {} };
    expect(await installEnv(plan, envs)).toEqual({ ok: true, reused: false });
    expect(readdirSync(envs)).toEqual(['pip-new']);
  });

  it('a place chooses the command and the environment: it gets the staging folder, made already, and the command aimed at it', async () => {
    const recorder = installer('recorder3', RECORDER);
    const { envs, plan } = planOf((dir) => [recorder, '--target', dir]);
    const seen: { command: string[]; staging: string; existed: boolean }[] = [];
    const place: InstallPlace = async (command, staging) => {
      seen.push({ command, staging, existed: existsSync(staging) });
      return { command, env: { TWYLT_INSTALL_MARK: 'placed' } };
    };
    expect(await installEnv(plan, envs, place)).toEqual({ ok: true, reused: false });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.existed).toBe(true);
    expect(seen[0]!.command).toEqual([recorder, '--target', seen[0]!.staging]);
    const record = JSON.parse(readFileSync(join(plan.dir, 'record.json'), 'utf8'));
    expect({ cwd: record.cwd, PIP_NO_INPUT: record.PIP_NO_INPUT, MARK: record.MARK }).toEqual({ cwd: seen[0]!.staging, PIP_NO_INPUT: null, MARK: 'placed' });
  });

  const failures: [string, string, (file: string) => string][] = [
    ["pip's last ERROR: line", "process.stderr.write('Collecting x\\nERROR: first\\nERROR: No matching distribution found for x\\nnotice\\n'); process.exit(1);", () => 'ERROR: No matching distribution found for x'],
    ['an exit code, no output', 'process.exit(3);', (file) => `${file} failed (exit 3)`],
    ['killed by a signal', "process.kill(process.pid, 'SIGKILL');", (file) => `${file} failed (killed by SIGKILL)`],
    ['succeeded, wrote nothing', '', (file) => `${file} succeeded but left nothing in the environment folder`],
  ];
  for (const [what, body, reason] of failures) {
    it(`fails with ${what}; no environment, no staging folder left`, async () => {
      const file = installer(`failing-${what.replace(/\W+/g, '-')}`, body);
      const { envs, plan } = planOf((dir) => [file, '--target', dir]);
      expect(await installEnv(plan, envs)).toEqual({ ok: false, reason: reason(file) });
      expect(readdirSync(envs)).toEqual([]);
    });
  }

  it('an installer that never ends is killed after 10 minutes, its process group with it: killed by SIGKILL, nothing left', async () => {
    const started = join(scratch, 'hang-started');
    const file = installer('hang', `fs.writeFileSync(${JSON.stringify(started)}, String(process.pid)); setInterval(() => {}, 1000);`);
    const { envs, plan } = planOf((dir) => [file, '--target', dir]);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let pid = 0;
    try {
      const outcome = installEnv(plan, envs);
      // Its time-out is set when it is spawned; it has run once it wrote its pid.
      const written = () => (existsSync(started) ? readFileSync(started, 'utf8') : '');
      for (let tries = 0; tries < 1600 && written() === ''; tries++) await new Promise((done) => realSetTimeout(done, 25));
      pid = Number(written());
      expect(pid).toBeGreaterThan(0);
      vi.advanceTimersByTime(10 * 60_000 - 1);
      expect(alive(pid)).toBe(true);
      vi.advanceTimersByTime(1);
      expect(await bounded(outcome)).toEqual({ ok: false, reason: `${file} failed (killed by SIGKILL)` });
      expect(alive(pid)).toBe(false);
      expect(readdirSync(envs)).toEqual([]);
    } finally {
      vi.useRealTimers();
      if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('an install that ends, well or not, leaves no time-out pending (a 10-minute timer would hold the scan open)', async () => {
    const recorder = installer('recorder-timer', RECORDER);
    const failing = installer('failing-timer', 'process.exit(2);');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      for (const [command, ok] of [[recorder, true], [failing, false], [join(scratch, 'bin', 'no-such-installer'), false]] as const) {
        const { envs, plan } = planOf((dir) => [command, '--target', dir]);
        expect((await bounded(installEnv(plan, envs))).ok).toBe(ok);
        expect(vi.getTimerCount()).toBe(0);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it("only the last MiB of the installer's stderr is kept: an ERROR: line followed by more than that is not its reason, the last line is", async () => {
    const file = installer('chatty', "process.stderr.write('ERROR: early\\n'); const line = 'y'.repeat(1023) + '\\n'; for (let i = 0; i < 1100; i++) process.stderr.write(line); process.stderr.write('the last line\\n', () => process.exit(1));");
    const { envs, plan } = planOf((dir) => [file, '--target', dir]);
    expect(await installEnv(plan, envs)).toEqual({ ok: false, reason: 'the last line' });
  });

  it('an ERROR: line within the last MiB is the reason', async () => {
    const file = installer('chatty-kept', "const line = 'y'.repeat(1023) + '\\n'; for (let i = 0; i < 1000; i++) process.stderr.write(line); process.stderr.write('ERROR: kept\\nthe last line\\n', () => process.exit(1));");
    const { envs, plan } = planOf((dir) => [file, '--target', dir]);
    expect(await installEnv(plan, envs)).toEqual({ ok: false, reason: 'ERROR: kept' });
  });

  /** A stand-in sandbox that runs the command as it is and reports what a real one would: a limit the kernel counted, or one read from stderr (rlimits, no cgroup). */
  const standInSandbox = (counted: 'memory' | 'processes' | undefined, inOutput?: (stderr: string) => 'memory' | 'processes' | undefined): SpawnSandbox => ({
    wrap: (command, options) => ({ command, cwd: options.cwd ?? '/', env: options.env ?? {}, extraPipes: 0, started: () => undefined, ended: () => counted, ...(inOutput ? { limitInOutput: inOutput } : {}) }),
  });
  const limits: [string, SpawnSandbox, string][] = [
    ['counted by the kernel (a cgroup)', standInSandbox('processes'), 'processes'],
    ["read from the installer's stderr (rlimits)", standInSandbox(undefined, (stderr) => (/MemoryError/.test(stderr) ? 'memory' : undefined)), 'memory'],
  ];
  for (const [how, sandbox, limit] of limits) {
    it(`a sandbox limit the install ran into, ${how}, is the reason, naming the flags`, async () => {
      const file = installer(`limited-${limit}`, "process.stderr.write('ERROR: Exception\\nMemoryError\\n', () => process.exit(1));");
      const { envs, plan } = planOf((dir) => [file, '--target', dir]);
      const place: InstallPlace = async (command) => ({ command, env: {}, sandbox });
      expect(await installEnv(plan, envs, place)).toEqual({ ok: false, reason: `${file} ran into the sandbox's ${limit} limit (--sandbox-memory, --sandbox-processes, --sandbox-cpu-seconds)` });
      expect(readdirSync(envs)).toEqual([]);
    });
  }

  it('a missing installer fails with the spawn error; nothing left', async () => {
    const missing = join(scratch, 'bin', 'no-such-pip');
    const { envs, plan } = planOf((dir) => [missing, '--target', dir]);
    expect(await installEnv(plan, envs)).toEqual({ ok: false, reason: `${missing} failed: spawn ${missing} ENOENT` });
    expect(readdirSync(envs)).toEqual([]);
  });

  it("npm's links only (no command): each a link in node_modules, scoped names nested", async () => {
    const envs = mkdtempSync(join(scratch, 'envs-'));
    const plan: EnvPlan = { installer: 'npm', dir: join(envs, 'npm-links'), command: [], env: {}, links: { one: '/packs/one', '@s/two': '/packs/two', '@s/three': '/packs/three' } };
    expect(await installEnv(plan, envs)).toEqual({ ok: true, reused: false });
    expect(readdirSync(join(plan.dir, 'node_modules')).sort()).toEqual(['@s', 'one']);
    expect(readlinkSync(join(plan.dir, 'node_modules', 'one'))).toBe('/packs/one');
    expect(readlinkSync(join(plan.dir, 'node_modules', '@s', 'two'))).toBe('/packs/two');
    expect(readlinkSync(join(plan.dir, 'node_modules', '@s', 'three'))).toBe('/packs/three');
    expect(readdirSync(envs)).toEqual(['npm-links']);
  });

  it('another scan renamed the same environment into place first: that one is used', async () => {
    const recorder = installer('recorder4', RECORDER);
    const { envs, plan } = planOf((dir) => [recorder, '--target', dir]);
    const place: InstallPlace = async (command) => {
      mkdirSync(plan.dir);
      writeFileSync(join(plan.dir, 'theirs'), '');
      return { command, env: {} };
    };
    expect(await installEnv(plan, envs, place)).toEqual({ ok: true, reused: false });
    expect(readdirSync(plan.dir)).toEqual(['theirs']);
    expect(readdirSync(envs)).toEqual(['pip-env']);
  });

  it('what holds the place is not an environment (a file): the rename\'s error, first line; staging removed', async () => {
    const recorder = installer('recorder5', RECORDER);
    const { envs, plan } = planOf((dir) => [recorder, '--target', dir]);
    const place: InstallPlace = async (command) => {
      writeFileSync(plan.dir, 'a file');
      return { command, env: {} };
    };
    const outcome = await installEnv(plan, envs, place);
    expect(outcome.ok).toBe(false);
    expect((outcome as { reason: string }).reason).toMatch(new RegExp(`^ENOTDIR: not a directory, rename '${envs}/\\.staging-[0-9a-f]{12}' -> '${plan.dir}'$`));
    expect(readdirSync(envs)).toEqual(['pip-env']);
  });
});

describe.skipIf(SANDBOX_SKIP_REASON !== undefined)(`InstallSandboxes: a sandboxed install writes its staging folder and nothing else${SANDBOX_SKIP_REASON ? ` (skipped: ${SANDBOX_SKIP_REASON})` : ''}`, () => {
  const policy = resolveSandboxPolicy({ memoryMb: 0, processes: 0, cpuSeconds: 0 });

  it("pip: the configuration as variables, --target=DIR joined; the pack read-only, the envs folder and the rest not writable; pip's configuration read once", async () => {
    const pack = join(scratch, 'pack');
    mkdirSync(pack, { recursive: true });
    const cert = join(scratch, 'trust.pem');
    writeFileSync(cert, 'CA');
    const asked = join(scratch, 'pip-config-asked');
    writeFileSync(join(pack, 'requirements.txt'), 'x');
    const pipCert = join(scratch, 'pip-cert.pem');
    writeFileSync(pipCert, 'PIP CA');
    const python = installer('python-sandbox', `fs.appendFileSync(${JSON.stringify(asked)}, JSON.stringify([process.cwd(), ...process.argv.slice(2)]) + '\\n'); process.stdout.write("global.index-url='https://own.example/simple'\\nglobal.cert='${pipCert}'\\n");`);
    // The installer's own code is elsewhere (as pip is): the pack is readable because the install is of it.
    mkdirSync(join(scratch, 'installer'), { recursive: true });
    const probe = join(scratch, 'installer', 'install.js');
    writeFileSync(
      probe,
      `const fs = require('fs');
const [target] = process.argv.slice(2).filter((arg) => arg.startsWith('--target=')).map((arg) => arg.slice('--target='.length));
const attempt = (file) => { try { fs.writeFileSync(file, 'x'); return 'written'; } catch (error) { return error.code; } };
fs.writeFileSync(target + '/record.json', JSON.stringify({
  argv: process.argv.slice(2), cwd: process.cwd(),
  env: Object.fromEntries(Object.entries(process.env).filter(([name]) => /^(PIP_|SSL_CERT_FILE$)/.test(name))),
  pack: attempt(${JSON.stringify(join(pack, 'evil'))}), envs: attempt(require('path').dirname(target) + '/evil'),
  readPack: fs.readFileSync(${JSON.stringify(join(pack, 'requirements.txt'))}, 'utf8'), readCert: fs.readFileSync(process.env.PIP_CERT, 'utf8'), proxy: process.env.HTTPS_PROXY ?? null,
}));`,
    );
    const sandboxes = new InstallSandboxes(policy, async () => ({ executable: python, version: '3.12' }));
    const saved = process.env.SSL_CERT_FILE;
    process.env.SSL_CERT_FILE = cert;
    try {
      const { envs, plan } = planOf((dir) => [process.execPath, probe, '--target', dir, '--', 'x']);
      expect(await installEnv(plan, envs, sandboxes.place('pip', pack))).toEqual({ ok: true, reused: false });
      const record = JSON.parse(readFileSync(join(plan.dir, 'record.json'), 'utf8'));
      expect(record.argv).toEqual([`--target=${record.cwd}`, '--', 'x']);
      expect(record.cwd).toMatch(new RegExp(`^${envs}/\\.staging-[0-9a-f]{12}$`));
      expect(record.env).toEqual({ PIP_NO_INPUT: '1', PIP_CONFIG_FILE: '/dev/null', PIP_INDEX_URL: 'https://own.example/simple', PIP_CERT: pipCert, SSL_CERT_FILE: cert });
      // The files its configuration names are readable; the hosts it names reached through the sandbox's proxy.
      expect({ readPack: record.readPack, readCert: record.readCert }).toEqual({ readPack: 'x', readCert: 'PIP CA' });
      expect(record.proxy).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // The pack is mounted read-only; the envs folder is not mounted (it is under the host's
      // /tmp, so the write lands in the sandbox's private /tmp): neither reaches the host.
      expect(record.pack).toBe('EROFS');
      expect(existsSync(join(pack, 'evil'))).toBe(false);
      expect(existsSync(join(envs, 'evil'))).toBe(false);
      // A second install of the same installer: its configuration is not read again.
      const again = planOf((dir) => [process.execPath, probe, '--target', dir], 'again');
      expect(await installEnv(again.plan, again.envs, sandboxes.place('pip', pack))).toEqual({ ok: true, reused: false });
      expect(readFileSync(asked, 'utf8')).toBe(`${JSON.stringify(['/', '-I', '-m', 'pip', 'config', 'list'])}\n`);
    } finally {
      if (saved === undefined) delete process.env.SSL_CERT_FILE;
      else process.env.SSL_CERT_FILE = saved;
      await sandboxes.close();
    }
  }, 60_000);

  it("npm: the registry npm names (asked from /) as npm_config_registry; a target that is not an option's value stays as it is; a host refused is named as the npm install's; close() stops its proxy", async () => {
    const pack = join(scratch, 'npm-pack');
    mkdirSync(pack, { recursive: true });
    const probe = join(pack, 'install.js');
    writeFileSync(
      probe,
      `const fs = require('fs');
const record = (blocked) => fs.writeFileSync(process.cwd() + '/record.json', JSON.stringify({ argv: process.argv.slice(2), registry: process.env.npm_config_registry ?? null, proxy: process.env.HTTPS_PROXY ?? null, blocked }));
// A host its configuration does not name, through its proxy: refused.
const proxy = new URL(process.env.HTTPS_PROXY);
const asked = require('http').request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: 'blocked.example:443' });
asked.on('connect', (response, socket) => { socket.destroy(); record(response.statusCode); });
asked.on('response', (response) => record(response.statusCode));
asked.on('error', (error) => record(error.code));
asked.end();`,
    );
    const sandboxes = new InstallSandboxes(policy, async () => {
      throw new Error('npm installs ask no Python');
    });
    const saved = { registry: process.env.npm_config_registry, tmpdir: process.env.TMPDIR };
    process.env.npm_config_registry = 'https://registry.example/';
    // The proxy keeps its socket folder in the temporary folder: this row's own, to see it go.
    const tmp = join(scratch, 'npm-tmp');
    mkdirSync(tmp);
    process.env.TMPDIR = tmp;
    const refusals: unknown[] = [];
    const hear = (message: unknown) => refusals.push(message);
    sandboxRefusalChannel.subscribe(hear);
    try {
      const envs = mkdtempSync(join(scratch, 'envs-'));
      const dir = join(envs, 'npm-x');
      const plan: EnvPlan = { installer: 'npm', dir, command: [process.execPath, probe, dir], env: {} };
      expect(await installEnv(plan, envs, sandboxes.place('npm', pack))).toEqual({ ok: true, reused: false });
      const record = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8'));
      expect(record.argv).toEqual([expect.stringMatching(new RegExp(`^${envs}/\\.staging-[0-9a-f]{12}$`))]);
      expect(record.registry).toBe('https://registry.example/');
      // Its host is allowed: the sandbox's relay is its proxy.
      expect(record.proxy).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // Refused, and named for the operator as this installer's install.
      expect(record.blocked).toBe(403);
      expect(refusals).toEqual([{ reason: 'network', tool: 'npm install', host: 'blocked.example' }]);
      expect(readdirSync(tmp).filter((name) => name.startsWith('twylt-proxy-'))).toHaveLength(1);
      await sandboxes.close();
      expect(readdirSync(tmp).filter((name) => name.startsWith('twylt-proxy-'))).toEqual([]);
    } finally {
      sandboxRefusalChannel.unsubscribe(hear);
      for (const [name, value] of [['npm_config_registry', saved.registry], ['TMPDIR', saved.tmpdir]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await sandboxes.close();
    }
  }, 60_000);
});
