/**
 * The sandbox driver of bwrap.ts from the source (docs/mutation.md): the exact bwrap argv a
 * wrap produces (namespaces, no capability, /tmp sized before it is made, the mounts, the
 * proxy socket, `--args 3` with a cgroup, prlimit's options), the environment a tool gets
 * (declared, passed, allowEnv, the proxy and CA variables only with a relay, nothing else of
 * the consumer's), the limits a call's end reports, and the probe: a fake bwrap printing a
 * status for each refusal, the real bwrap for the rest. The tools themselves run in the
 * end-to-end files (sandbox.test.ts, hostile*.test.ts).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { connect, createServer, type AddressInfo } from 'node:net';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { PassThrough } from 'node:stream';
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { prepareSandbox, SandboxUnavailableError, type PreparedSandbox } from '../../packages/twylt/src/toolset/sandbox/bwrap.js';
import { systemMounts } from '../../packages/twylt/src/toolset/sandbox/files.js';
import { CallCgroup, findCgroupBase, type CgroupBase } from '../../packages/twylt/src/toolset/sandbox/limits.js';
import type { SandboxPolicy } from '../../packages/twylt/src/toolset/sandbox/policy.js';
import { relayMain } from '../../packages/twylt/src/toolset/sandbox/relay.js';
import { SANDBOX_SKIP_REASON } from './support.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-bwrap-unit-')));
const prefix = join(scratch, 'prefix');
const tool = join(prefix, 'bin', 'tool');
const work = join(scratch, 'work');
const certFile = join(scratch, 'certs', 'ca.pem');
const certDir = join(scratch, 'certs', 'dir');
const curlBundle = join(scratch, 'certs', 'curl.pem');

/**
 * A stand-in for bwrap: prints `status` on stdout, `stderr` on stderr, exits with `code`. A
 * shell script (its texts in files beside it), not a Node.js one: every prepareSandbox runs
 * it, and under mutation testing (docs/mutation.md) each mutant of bwrap.ts runs it again.
 */
function fakeBwrap(name: string, status: string, code = 0, stderr = ''): string {
  const file = join(scratch, 'fake', name);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.out`, status);
  writeFileSync(`${file}.err`, stderr);
  writeFileSync(file, `#!/bin/sh\n/bin/cat '${file}.out'\n/bin/cat '${file}.err' >&2\nexit ${code}\n`);
  chmodSync(file, 0o755);
  return file;
}

const ENV_NAMES = [
  'PATH', 'LANG', 'LANGUAGE', 'TZ', 'INPUT_DESCRIBE', 'TWYLT_ERROR_FORMAT', 'TWYLT_DEBUG', 'TOOLSPEC_ERROR_FORMAT', 'TOOLSPEC_DEBUG', 'TWYLT_GUARDRAILS',
  'TWYLT_WORKSPACE_ROOT', 'TWYLT_ALLOWED_CWD', 'TWYLT_DISABLE_NETWORK', 'TWYLT_INCIDENT_LOG', 'TWYLT_MAX_INPUT_BYTES', 'PYTHONPATH', 'NODE_PATH',
  'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'TWYLT_SANDBOX_BWRAP', 'HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'NODE_USE_ENV_PROXY',
];
/** What this file changed of the environment, restored after it. */
const saved: Record<string, string | undefined> = {};
let ok = '';

beforeAll(() => {
  mkdirSync(dirname(tool), { recursive: true });
  writeFileSync(tool, '#!/bin/sh\necho tool\n');
  chmodSync(tool, 0o755);
  mkdirSync(work);
  mkdirSync(certDir, { recursive: true });
  writeFileSync(certFile, 'CA');
  writeFileSync(curlBundle, 'CA');
  ok = fakeBwrap('ok', 'Name:\tnode\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n');
  for (const name of Object.keys(process.env)) {
    if (!ENV_NAMES.includes(name) && !name.startsWith('LC_') && !name.startsWith('TWYLT_')) continue;
    saved[name] = process.env[name];
    delete process.env[name];
  }
  saved.PATH = saved.PATH ?? process.env.PATH;
  process.env.PATH = '/usr/bin:/bin';
});

afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(scratch, { recursive: true, force: true });
});

const opened: PreparedSandbox[] = [];
afterEach(async () => {
  for (const sandbox of opened.splice(0)) await sandbox.close();
});

async function prepared(policy: SandboxPolicy, cgroup: CgroupBase | null = null, bwrap = ok): Promise<PreparedSandbox> {
  const sandbox = await prepareSandbox(policy, { bwrap, cgroup });
  opened.push(sandbox);
  return sandbox;
}

const NONE = { memoryMb: 0, processes: 0, cpuSeconds: 0 };
const mountArgs = () => systemMounts().flatMap((mount) => (mount.kind === 'symlink' ? ['--symlink', mount.target, mount.path] : ['--ro-bind', mount.path, mount.path]));
const HEAD = ['--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--die-with-parent', '--new-session', '--proc', '/proc', '--dev', '/dev'];

/** bwrap's options up to /tmp, the tool's mounts, then the tail. */
function bwrapArgs(tmp: string[], mounts: string[], cwd = work): string[] {
  return [...HEAD, ...mountArgs(), ...tmp, '--tmpfs', '/tmp', '--dir', '/tmp/home', ...mounts, '--remount-ro', '/', '--chdir', cwd];
}
const TOOL_MOUNTS = ['--ro-bind', prefix, prefix, '--bind', work, work];

/** A child as joinThenRun sees it: its pid, fd 3 (collected), kill. */
function fakeChild(pid = 4242) {
  const pipe = new PassThrough();
  let written = '';
  pipe.on('data', (chunk: Buffer) => (written += chunk.toString()));
  const kill = vi.fn();
  const child = { pid, stdio: [null, null, null, pipe], kill } as unknown as ChildProcess;
  return { child, kill, pipe, written: () => written };
}

describe('the argv of a wrap', () => {
  it('no limits, offline: bwrap alone, every namespace, no capability, no nested userns, /tmp unsized, the tool and its workspace', async () => {
    const sandbox = await prepared(NONE);
    expect(sandbox.limits).toBe('none');
    const wrapped = sandbox.forTool().wrap([tool, 'arg'], { cwd: work });
    expect(wrapped.command).toEqual([ok, ...bwrapArgs([], TOOL_MOUNTS), '--', tool, 'arg']);
    expect(wrapped.cwd).toBe(work);
    expect(wrapped.extraPipes).toBe(0);
    expect(mountArgs().join(' ')).toContain('--ro-bind /usr /usr');
    expect(mountArgs().join(' ')).toContain('--ro-bind /etc/passwd /etc/passwd');
    expect(mountArgs().join(' ')).not.toContain('/etc/ssl/private');
  });

  it('the workspace and TWYLT_WORKSPACE_ROOT are writable too; an empty one is none', async () => {
    const sandbox = await prepared(NONE);
    const ws = join(scratch, 'ws');
    const root = join(scratch, 'wsroot');
    mkdirSync(ws, { recursive: true });
    mkdirSync(root, { recursive: true });
    const wrapped = sandbox.forTool({ workspace: ws }).wrap([tool], { cwd: work, env: { TWYLT_WORKSPACE_ROOT: root } });
    expect(wrapped.command).toEqual([ok, ...bwrapArgs([], ['--ro-bind', prefix, prefix, '--bind', work, work, '--bind', ws, ws, '--bind', root, root]), '--', tool]);
    const empty = sandbox.forTool({ workspace: '' }).wrap([tool], { cwd: work, env: { TWYLT_WORKSPACE_ROOT: '' } });
    expect(empty.command).toEqual([ok, ...bwrapArgs([], TOOL_MOUNTS), '--', tool]);
  });

  it('CPU seconds: prlimit first, no core files, SIGXCPU at the limit and SIGKILL a second later', async () => {
    const sandbox = await prepared({ ...NONE, cpuSeconds: 7 });
    expect(sandbox.limits).toBe('rlimit');
    const wrapped = sandbox.forTool().wrap([tool], { cwd: work });
    expect(wrapped.command).toEqual(['/usr/bin/prlimit', '--core=0', '--cpu=7:8', '--', ok, ...bwrapArgs([], TOOL_MOUNTS), '--', tool]);
  });

  it('memory without a cgroup: an rlimit on data, and /tmp sized to half of it, before --tmpfs', async () => {
    const sandbox = await prepared({ ...NONE, memoryMb: 4096 });
    expect(sandbox.limits).toBe('rlimit');
    const wrapped = sandbox.forTool().wrap([tool], { cwd: work });
    expect(wrapped.command).toEqual(['/usr/bin/prlimit', '--core=0', `--data=${4096 * 1024 * 1024}`, '--', ok, ...bwrapArgs(['--size', String(2048 * 1024 * 1024)], TOOL_MOUNTS), '--', tool]);
  });

  it("a tool's own processes limit without a cgroup: --nproc; memory 1 MB sizes /tmp at 1 MiB, not 0", async () => {
    const sandbox = await prepared(NONE);
    const wrapped = sandbox.forTool({ policy: { processes: 5, memoryMb: 1 } }).wrap([tool], { cwd: work });
    // The consumer's policy had no limit: no prlimit for the consumer, bwrap alone for the tool too.
    expect(wrapped.command).toEqual([ok, ...bwrapArgs(['--size', String(1024 * 1024)], TOOL_MOUNTS), '--', tool]);
    const limited = await prepared({ ...NONE, cpuSeconds: 1 });
    const both = limited.forTool({ policy: { processes: 5, memoryMb: 3 } }).wrap([tool], { cwd: work });
    expect(both.command).toEqual(['/usr/bin/prlimit', '--core=0', '--cpu=1:2', `--data=${3 * 1024 * 1024}`, '--nproc=5', '--', ok, ...bwrapArgs(['--size', String(1024 * 1024)], TOOL_MOUNTS), '--', tool]);
  });

  it('with a cgroup: --args 3 and one extra pipe; the options go on fd 3, NUL-terminated, after the pid joined the cgroup', async () => {
    const base: CgroupBase = { version: 2, dirs: [mkdtempSync(join(scratch, 'cg-'))] };
    const sandbox = await prepared({ ...NONE, memoryMb: 100, processes: 9 }, base);
    expect(sandbox.limits).toBe('cgroup');
    const wrapped = sandbox.forTool().wrap([tool], { cwd: work });
    expect(wrapped.command).toEqual([ok, '--args', '3', '--', tool]);
    expect(wrapped.extraPipes).toBe(1);
    expect(wrapped.limitInOutput).toBeUndefined();
    const call = readdirSync(base.dirs[0]!).map((name) => join(base.dirs[0]!, name)).find((dir) => !existsSync(join(dir, 'cgroup.procs')))!;
    const child = fakeChild(777);
    wrapped.started(child.child);
    await new Promise((done) => setImmediate(done));
    expect(child.written()).toBe(bwrapArgs(['--size', String(50 * 1024 * 1024)], TOOL_MOUNTS).map((arg) => `${arg}\0`).join(''));
    expect(child.kill).not.toHaveBeenCalled();
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(call, 'cgroup.procs'), 'utf8')).toBe('777');
    expect(readFileSync(join(call, 'memory.max'), 'utf8')).toBe(String(100 * 1024 * 1024));
    expect(readFileSync(join(call, 'pids.max'), 'utf8')).toBe('9');
  });

  it('a process that cannot join the cgroup is killed, never gets its options, and started() throws why (a spawn that failed)', async () => {
    const base: CgroupBase = { version: 2, dirs: [mkdtempSync(join(scratch, 'cg-'))] };
    const sandbox = await prepared({ ...NONE, memoryMb: 100 }, base);
    const before = new Set(readdirSync(base.dirs[0]!));
    const wrapped = sandbox.forTool().wrap([tool], { cwd: work });
    const call = readdirSync(base.dirs[0]!).find((name) => !before.has(name))!;
    mkdirSync(join(base.dirs[0]!, call, 'cgroup.procs'));
    const child = fakeChild();
    const thrown = (() => {
      try {
        wrapped.started(child.child);
      } catch (error) {
        return error as NodeJS.ErrnoException;
      }
    })();
    expect(thrown?.code).toBe('EISDIR');
    expect(thrown?.message).toBe(
      `spawn ${tool} EISDIR: the sandbox could not put it in its call's cgroup, so it never ran (EISDIR: illegal operation on a directory, open '${join(base.dirs[0]!, call, 'cgroup.procs')}')`,
    );
    // The kernel's own error kept as the cause.
    expect(thrown?.cause).toBeInstanceOf(Error);
    expect(thrown?.cause).toMatchObject({ code: 'EISDIR' });
    await new Promise((done) => setImmediate(done));
    expect(child.kill).toHaveBeenCalledWith('SIGKILL');
    expect(child.written()).toBe('');
    expect(child.pipe.destroyed).toBe(true);
  });

  it('a command not found is ENOENT, as an unsandboxed spawn reports it', async () => {
    const sandbox = await prepared(NONE);
    const thrown = (() => {
      try {
        sandbox.forTool().wrap(['no-such-tool-here'], { cwd: work });
      } catch (error) {
        return error as NodeJS.ErrnoException;
      }
      return undefined;
    })();
    expect(thrown?.message).toBe('spawn no-such-tool-here ENOENT');
    expect(thrown).toMatchObject({ code: 'ENOENT', errno: -2, path: 'no-such-tool-here' });
  });
});

describe('the environment a tool gets', () => {
  it("only the passed variables, LC_*, allowEnv and the declared ones (undefined removes one); HOME and TMPDIR the sandbox's", async () => {
    Object.assign(process.env, { LANG: 'C.UTF-8', LC_ALL: 'C', TWYLT_DEBUG: '1', NODE_PATH: '', TWYLT_MCP_TOKEN: 'secret', AWS_SECRET_ACCESS_KEY: 'k', ALLOWED_X: 'a', XLC_NOT: 'n', TZ: 'UTC' });
    try {
      const sandbox = await prepared({ ...NONE, allowEnv: ['ALLOWED_X'] });
      const wrapped = sandbox.forTool().wrap([tool], { cwd: work, env: { DECLARED: 'd', TZ: undefined, TWYLT_DEBUG: '2' } });
      expect(wrapped.env).toStrictEqual({ PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C', TWYLT_DEBUG: '2', NODE_PATH: '', ALLOWED_X: 'a', DECLARED: 'd', HOME: '/tmp/home', TMPDIR: '/tmp' });
      // A tool's own allowEnv adds to the consumer's.
      const own = (await prepared(NONE)).forTool({ policy: { allowEnv: ['XLC_NOT'] } }).wrap([tool], { cwd: work });
      expect(own.env.XLC_NOT).toBe('n');
      expect(own.env.ALLOWED_X).toBeUndefined();
      expect(own.env.HOME).toBe('/tmp/home');
    } finally {
      for (const name of ['LANG', 'LC_ALL', 'TWYLT_DEBUG', 'NODE_PATH', 'TWYLT_MCP_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'ALLOWED_X', 'XLC_NOT', 'TZ']) delete process.env[name];
    }
  });

  it('each protocol variable and LC_* is passed by its exact name; a name that only resembles one is not', async () => {
    const passed = ['LANG', 'LANGUAGE', 'TZ', 'INPUT_DESCRIBE', 'TWYLT_ERROR_FORMAT', 'TWYLT_DEBUG', 'TOOLSPEC_ERROR_FORMAT', 'TOOLSPEC_DEBUG', 'TWYLT_GUARDRAILS', 'TWYLT_WORKSPACE_ROOT', 'TWYLT_ALLOWED_CWD', 'TWYLT_DISABLE_NETWORK', 'TWYLT_INCIDENT_LOG', 'TWYLT_MAX_INPUT_BYTES', 'PYTHONPATH', 'NODE_PATH', 'LC_CTYPE'];
    const kept = ['TWYLT_MCP_TOKEN', 'TWYLT_DEBUGGER', 'XLANG', 'LANG_', 'MY_LC_X', 'lc_ctype'];
    // Set after the probe (which runs the fake bwrap with them: a TZ of that kind crashes it).
    const sandbox = await prepared(NONE);
    for (const name of [...passed, ...kept]) process.env[name] = `value of ${name}`;
    try {
      const wrapped = sandbox.forTool().wrap([tool], { cwd: work });
      expect(wrapped.env).toStrictEqual({ PATH: '/usr/bin:/bin', ...Object.fromEntries(passed.map((name) => [name, `value of ${name}`])), HOME: '/tmp/home', TMPDIR: '/tmp' });
    } finally {
      for (const name of [...passed, ...kept]) delete process.env[name];
    }
  });

  it('offline: no proxy variable, no certificate bundle of the consumer, no relay', async () => {
    Object.assign(process.env, { SSL_CERT_FILE: certFile });
    try {
      const sandbox = await prepared(NONE);
      const wrapped = sandbox.forTool().wrap([tool], { cwd: work });
      expect(wrapped.env).toStrictEqual({ PATH: '/usr/bin:/bin', HOME: '/tmp/home', TMPDIR: '/tmp' });
      // Allowed a host but told to stay offline (each truthy spelling): still none.
      for (const value of ['1', 'true', 'YES', 'on']) {
        const offline = (await prepared({ ...NONE, allowNet: ['example.com'] })).forTool().wrap([tool], { cwd: work, env: { TWYLT_DISABLE_NETWORK: value } });
        expect(offline.command.at(-1)).toBe(tool);
        expect(offline.env.HTTPS_PROXY).toBeUndefined();
      }
    } finally {
      delete process.env.SSL_CERT_FILE;
    }
  });
});

describe('a tool allowed some host: the relay and its proxy', () => {
  it('runs the relay with its settings as its last argument, the proxy socket bound in, the proxy variables and CA bundles set and mounted', async () => {
    Object.assign(process.env, { SSL_CERT_FILE: certFile, SSL_CERT_DIR: `${certDir}:${join(scratch, 'missing')}::relative`, NODE_EXTRA_CA_CERTS: join(scratch, 'missing.pem'), CURL_CA_BUNDLE: '/consumer/curl.pem', REQUESTS_CA_BUNDLE: certFile });
    try {
      const sandbox = await prepared({ ...NONE, allowNet: ['example.com'] });
      const wrapped = sandbox.forTool({ name: 'fetcher' }).wrap([tool, 'x'], { cwd: work, env: { TWYLT_DISABLE_NETWORK: '0', CURL_CA_BUNDLE: curlBundle } });
      const proxy = 'http://127.0.0.1:3128';
      expect(wrapped.env).toStrictEqual({
        PATH: '/usr/bin:/bin',
        TWYLT_DISABLE_NETWORK: '0',
        CURL_CA_BUNDLE: curlBundle,
        HOME: '/tmp/home',
        TMPDIR: '/tmp',
        HTTP_PROXY: proxy,
        HTTPS_PROXY: proxy,
        http_proxy: proxy,
        https_proxy: proxy,
        NODE_USE_ENV_PROXY: '1',
        NODE_EXTRA_CA_CERTS: join(scratch, 'missing.pem'),
        SSL_CERT_FILE: certFile,
        SSL_CERT_DIR: `${certDir}:${join(scratch, 'missing')}::relative`,
        REQUESTS_CA_BUNDLE: certFile,
      });
      const command = wrapped.command;
      const dash = command.indexOf('--', 1);
      expect(command.slice(dash + 1)).toEqual([process.execPath, '-e', `(${relayMain.toString()})()`, JSON.stringify({ socket: '/run/twylt-proxy.sock', port: 3128, command: [tool, 'x'] })]);
      const args = command.slice(1, dash);
      const bound = args.indexOf('/run/twylt-proxy.sock');
      expect(args[bound - 2]).toBe('--ro-bind');
      const socket = args[bound - 1]!;
      expect(socket).toMatch(/\/twylt-proxy-[^/]+\/call-1\.sock$/);
      expect(args.slice(bound + 1)).toEqual(['--remount-ro', '/', '--chdir', work]);
      const text = args.join(' ');
      for (const path of [certFile, certDir, curlBundle]) expect(text).toContain(`--ro-bind ${path} ${path}`);
      expect(text).not.toContain('missing');
      const runtime = dirname(dirname(realpathSync(process.execPath)));
      if (!runtime.startsWith('/usr')) expect(text).toContain(`--ro-bind ${runtime} ${runtime}`);

      // The session is this call's: a host not allowed gets 403, logged with the tool, published as a refusal.
      const refusals: unknown[] = [];
      const listener = (message: unknown) => refusals.push(message);
      subscribe('twylt:sandbox:refusal', listener);
      try {
        const answer = await new Promise<string>((done) => {
          const client = connect(socket);
          let body = '';
          client.on('data', (chunk) => (body += chunk.toString()));
          client.on('close', () => done(body));
          client.write('CONNECT evil.example.net:443 HTTP/1.1\r\n\r\n');
        });
        expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
        expect(refusals).toStrictEqual([{ reason: 'network', tool: 'fetcher', host: 'evil.example.net' }]);
      } finally {
        unsubscribe('twylt:sandbox:refusal', listener);
      }
      wrapped.adopted?.();
      expect(wrapped.ended(0, null)).toBeUndefined();
      expect(existsSync(socket)).toBe(false);
    } finally {
      for (const name of ['SSL_CERT_FILE', 'SSL_CERT_DIR', 'NODE_EXTRA_CA_CERTS', 'CURL_CA_BUNDLE', 'REQUESTS_CA_BUNDLE']) delete process.env[name];
    }
  });

  it("a declared NODE_USE_ENV_PROXY is the tool's; one proxy per tool and allow-list (case and order aside), another for another tool", async () => {
    const log = vi.fn();
    const sandbox = await prepareSandbox({ ...NONE, allowNet: ['B.example', 'a.example'] }, { bwrap: ok, cgroup: null, log });
    opened.push(sandbox);
    const socketOf = (command: readonly string[]) => command[command.indexOf('/run/twylt-proxy.sock') - 1]!;
    const first = sandbox.forTool({ name: 't' }).wrap([tool], { cwd: work, env: { NODE_USE_ENV_PROXY: '0' } });
    expect(first.env.NODE_USE_ENV_PROXY).toBe('0');
    const again = sandbox.forTool({ name: 't', policy: { allowNet: ['a.example'] } }).wrap([tool], { cwd: work });
    const other = sandbox.forTool({ name: 'u' }).wrap([tool], { cwd: work });
    expect(dirname(socketOf(again.command))).toBe(dirname(socketOf(first.command)));
    expect(socketOf(again.command)).not.toBe(socketOf(first.command));
    expect(dirname(socketOf(other.command))).not.toBe(dirname(socketOf(first.command)));
    // The consumer's log hears of a refusal with the tool's name.
    await new Promise<void>((done) => {
      const client = connect(socketOf(other.command));
      client.on('data', () => {});
      client.on('close', () => done());
      client.write('CONNECT c.example:443 HTTP/1.1\r\n\r\n');
    });
    expect(log).toHaveBeenCalledTimes(1);
    expect(log.mock.calls[0]![0]).toBe('twylt sandbox: refused a connection to c.example:443 of tool "u": c.example:443 is not an allowed host (--sandbox-allow-net)');
    await sandbox.close();
    expect(existsSync(dirname(socketOf(first.command)))).toBe(false);
    expect(existsSync(dirname(socketOf(other.command)))).toBe(false);
  });
});

describe("a call's end: the limit it ran into", () => {
  const refusals: unknown[] = [];
  const listener = (message: unknown) => refusals.push(message);
  beforeAll(() => subscribe('twylt:sandbox:refusal', listener));
  afterAll(() => unsubscribe('twylt:sandbox:refusal', listener));
  afterEach(() => {
    refusals.length = 0;
  });

  it("with a cgroup: the kernel's counters, only for a call that failed; the call's cgroup removed", async () => {
    const base: CgroupBase = { version: 2, dirs: [mkdtempSync(join(scratch, 'cg-'))] };
    const sandbox = await prepared({ ...NONE, memoryMb: 64, processes: 4 }, base);
    // The probe's own call cgroup keeps its files (a plain folder is no cgroup): left aside.
    const probe = new Set(readdirSync(base.dirs[0]!));
    const rows: [string, number, string | undefined][] = [
      ['oom_kill 1\n', 137, 'memory'],
      ['oom_kill 1\n', 0, undefined],
      ['oom_kill 0\n', 1, undefined],
    ];
    for (const [events, code, expected] of rows) {
      const before = new Set(readdirSync(base.dirs[0]!));
      const wrapped = sandbox.forTool({ name: 'hog' }).wrap([tool], { cwd: work });
      const call = join(base.dirs[0]!, readdirSync(base.dirs[0]!).find((name) => !before.has(name))!);
      rmSync(join(call, 'memory.max'));
      rmSync(join(call, 'memory.swap.max'));
      rmSync(join(call, 'pids.max'));
      writeFileSync(join(call, 'memory.events'), events);
      expect(wrapped.ended(code, null)).toBe(expected);
      rmSync(join(call, 'memory.events'));
    }
    expect(refusals).toStrictEqual([{ reason: 'memory', tool: 'hog' }]);
    // Removed at once when empty; the retries take the rest (waited for, up to 10 s).
    const rest = () => readdirSync(base.dirs[0]!).length > probe.size;
    for (const deadline = Date.now() + 10_000; rest() && Date.now() < deadline; ) await new Promise((done) => setTimeout(done, 20));
    expect(readdirSync(base.dirs[0]!)).toEqual([...probe]);
  });

  it('CPU seconds: SIGXCPU (exit 128 + 24) is cpu_time, only with a CPU limit', async () => {
    const limited = (await prepared({ ...NONE, cpuSeconds: 3 })).forTool();
    expect(limited.wrap([tool], { cwd: work }).ended(152, null)).toBe('cpu_time');
    expect(limited.wrap([tool], { cwd: work }).ended(137, null)).toBeUndefined();
    const free = (await prepared(NONE)).forTool({ name: 'spin' });
    expect(free.wrap([tool], { cwd: work }).ended(152, null)).toBeUndefined();
    expect(refusals).toStrictEqual([{ reason: 'cpu_time' }]);
  });

  it("without a cgroup, the runtime's own message names the rlimit hit, for the limits set", async () => {
    const memory = (await prepared({ ...NONE, memoryMb: 4096 })).forTool({ name: 'm' }).wrap([tool], { cwd: work });
    const processes = (await prepared(NONE)).forTool({ name: 'p', policy: { processes: 3 } }).wrap([tool], { cwd: work });
    const neither = (await prepared({ ...NONE, cpuSeconds: 5 })).forTool().wrap([tool], { cwd: work });
    const rows: [typeof memory, string, string | undefined][] = [
      [memory, 'FATAL ERROR: JavaScript heap out of memory', 'memory'],
      [memory, 'Cannot allocate memory', 'memory'],
      [memory, 'OSError: [Errno 12] ENOMEM', 'memory'],
      [memory, 'MemoryError', 'memory'],
      [memory, 'Allocation failed - process out of memory', 'memory'],
      [memory, 'memory allocation of 1024 bytes failed', 'memory'],
      [memory, 'spawn EAGAIN', undefined],
      [memory, 'ENOMEMORY', undefined],
      [processes, 'Error: spawn EAGAIN', 'processes'],
      [processes, 'fork: Resource temporarily unavailable', 'processes'],
      [processes, 'JavaScript heap out of memory', undefined],
      [processes, 'EAGAINED', undefined],
      [neither, 'out of memory, EAGAIN', undefined],
    ];
    for (const [wrapped, stderr, expected] of rows) expect(wrapped.limitInOutput?.(stderr), stderr).toBe(expected);
    expect(refusals).toStrictEqual([...Array(6).fill({ reason: 'memory', tool: 'm' }), ...Array(2).fill({ reason: 'processes', tool: 'p' })]);
  });
});

describe('the probe: prepareSandbox refuses a sandbox that does not work', () => {
  const refused: [string, () => string, SandboxPolicy, string][] = [
    ['capabilities left', () => fakeBwrap('caps', 'CapEff:\t000001ffffffffff\n'), NONE, 'leaves the tool capabilities here (CapEff 000001ffffffffff, expected 0)'],
    ['no CapEff line', () => fakeBwrap('nocaps', 'Name:\tnode\n'), NONE, 'leaves the tool capabilities here (CapEff unknown, expected 0)'],
    ['CapEff 0 not on its own line', () => fakeBwrap('late', 'XCapEff:\t0\n'), NONE, '(CapEff unknown, expected 0)'],
    ['CapEff 0 followed by more', () => fakeBwrap('more', 'CapEff:\t00001\n'), NONE, '(CapEff 00001, expected 0)'],
    ['CapEff after two tabs', () => fakeBwrap('tabs', 'CapEff:\t\t01\n'), NONE, '(CapEff 01, expected 0)'],
    ['bwrap fails', () => fakeBwrap('fails', '', 1, 'bwrap: setting up uid map: Permission denied\n'), NONE, 'cannot make a sandbox here: bwrap: setting up uid map: Permission denied'],
    ['bwrap fails silently', () => fakeBwrap('silent', 'CapEff:\t0\n', 3), NONE, 'cannot make a sandbox here: exit 3'],
    ['bwrap missing', () => join(scratch, 'no-bwrap'), NONE, `cannot make a sandbox here: spawn ${join(scratch, 'no-bwrap')} ENOENT`],
  ];
  for (const [what, bwrap, policy, message] of refused) {
    it(what, async () => {
      const file = bwrap();
      const error = await prepareSandbox(policy, { bwrap: file, cgroup: null }).catch((thrown: Error) => thrown);
      expect(error).toBeInstanceOf(SandboxUnavailableError);
      expect((error as Error).name).toBe('SandboxUnavailableError');
      expect((error as Error).message).toContain(message);
      expect((error as Error).message).toMatch(/; refusing to run tools unsandboxed \(docs\/sandbox\.md\)$/);
      // bwrap's own message trimmed: one line.
      expect((error as Error).message).not.toContain('\n');
      if (!message.startsWith('cannot make') || what === 'bwrap missing') expect((error as Error).message).toContain(`bubblewrap (${file})`);
    });
  }

  it('CapEff 0 after any run of blanks, or none: no capability, accepted', async () => {
    for (const [name, status] of [['blanks', 'CapEff:\t \t0000000000000000\n'], ['tight', 'CapEff:0\n']]) {
      expect((await prepared(NONE, null, fakeBwrap(name!, status!))).limits, status).toBe('none');
    }
  });

  it("a probe that cannot join its call's cgroup: refused with why (a failure without an errno code says failed), its call's cgroup removed", async () => {
    const base: CgroupBase = { version: 2, dirs: [mkdtempSync(join(scratch, 'cg-'))] };
    const joined = vi.spyOn(CallCgroup.prototype, 'join').mockImplementation(() => {
      throw new Error('the kernel refused');
    });
    const remove = vi.spyOn(CallCgroup.prototype, 'remove');
    try {
      const error = await prepareSandbox({ ...NONE, memoryMb: 64 }, { bwrap: ok, cgroup: base }).catch((thrown: Error) => thrown);
      expect(error).toBeInstanceOf(SandboxUnavailableError);
      expect((error as Error).message).toBe(
        `bubblewrap (${ok}) cannot make a sandbox here: spawn ${process.execPath} failed: the sandbox could not put it in its call's cgroup, so it never ran (the kernel refused); refusing to run tools unsandboxed (docs/sandbox.md)`,
      );
      expect(joined).toHaveBeenCalledTimes(1);
      expect(remove).toHaveBeenCalledTimes(1);
    } finally {
      vi.restoreAllMocks();
    }
  }, 15_000);

  const notRoot = process.getuid?.() !== 0;
  it.skipIf(notRoot)(`a process limit as root with no cgroup: refused before any probe${notRoot ? ' (skipped: not root; RLIMIT_NPROC binds another user)' : ''}`, async () => {
    await expect(prepareSandbox({ ...NONE, processes: 4 }, { bwrap: join(scratch, 'no-bwrap'), cgroup: null })).rejects.toThrow(
      'cannot limit processes: no writable cgroup here, and RLIMIT_NPROC does not bind root (--sandbox-processes 0 runs without that limit); refusing to run tools unsandboxed (docs/sandbox.md)',
    );
  });

  it('TWYLT_SANDBOX_BWRAP names the bwrap when the options do not', async () => {
    process.env.TWYLT_SANDBOX_BWRAP = ok;
    try {
      const sandbox = await prepareSandbox(NONE, { cgroup: null });
      opened.push(sandbox);
      expect(sandbox.forTool().wrap([tool], { cwd: work }).command[0]).toBe(ok);
      expect(sandbox.policy).toEqual({ ...NONE, allowRead: [], allowWrite: [], allowNet: [], allowEnv: [] });
    } finally {
      delete process.env.TWYLT_SANDBOX_BWRAP;
    }
  });

  it('the probe runs with the limits: its cgroup made and joined; the options on fd 3 (a fake bwrap that reads them)', async () => {
    const base: CgroupBase = { version: 1, dirs: [mkdtempSync(join(scratch, 'cgm-')), mkdtempSync(join(scratch, 'cgp-'))] };
    const reader = join(scratch, 'fake', 'reader');
    const seen = join(scratch, 'seen-args');
    writeFileSync(reader, `#!${process.execPath}\nconst fs = require('fs');\nfs.writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ argv: process.argv.slice(2), fd3: fs.readFileSync(3, 'utf8') }));\nprocess.stdout.write('CapEff:\\t0000000000000000\\n');\n`);
    chmodSync(reader, 0o755);
    await prepared({ ...NONE, memoryMb: 64 }, base, reader);
    const { readFileSync } = await import('node:fs');
    const { argv, fd3 } = JSON.parse(readFileSync(seen, 'utf8')) as { argv: string[]; fd3: string };
    expect(argv.slice(0, 3)).toEqual(['--args', '3', '--']);
    expect(argv.slice(3, 5)).toEqual([process.execPath, '-e']);
    const options = fd3.split('\0');
    expect(options.at(-1)).toBe('');
    expect(options.slice(0, HEAD.length)).toEqual(HEAD);
    expect(options.indexOf('--size')).toBe(options.indexOf('--tmpfs') - 2);
    expect(options[options.indexOf('--size') + 1]).toBe(String(32 * 1024 * 1024));
    // Joined in both hierarchies (v1), with its limit written in the memory one.
    const [memory, pids] = base.dirs.map((dir) => join(dir, readdirSync(dir)[0]!));
    expect(readFileSync(join(memory!, 'cgroup.procs'), 'utf8')).toMatch(/^\d+$/);
    expect(readFileSync(join(pids!, 'cgroup.procs'), 'utf8')).toBe(readFileSync(join(memory!, 'cgroup.procs'), 'utf8'));
    expect(readFileSync(join(memory!, 'memory.limit_in_bytes'), 'utf8')).toBe(String(64 * 1024 * 1024));
  });
});

describe("prepareSandbox's choices: the platform, where bwrap and prlimit come from, the cgroup, the log", () => {
  /** A fake bwrap that also writes its arguments, NUL-terminated, to `record`. */
  function recorder(name: string, record: string): string {
    const file = fakeBwrap(name, 'CapEff:\t0000000000000000\n');
    writeFileSync(file, `#!/bin/sh\nprintf '%s\\0' "$@" > '${record}'\n/bin/cat '${file}.out'\n`);
    return file;
  }
  const withPath = async <T>(path: string, run: () => Promise<T>): Promise<T> => {
    const before = process.env.PATH;
    process.env.PATH = path;
    try {
      return await run();
    } finally {
      process.env.PATH = before;
    }
  };
  const emptyDir = () => mkdtempSync(join(scratch, 'empty-'));
  const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: Error) => error);

  it('not Linux: refused before anything else, naming the platform', async () => {
    const platform = Object.getOwnPropertyDescriptor(process, 'platform')!;
    Object.defineProperty(process, 'platform', { value: 'darwin' });
    try {
      const error = await failure(prepareSandbox(NONE, { bwrap: ok, cgroup: null }));
      expect(error).toBeInstanceOf(SandboxUnavailableError);
      expect((error as Error).message).toBe(
        "--sandbox needs Linux with bubblewrap; darwin is not supported yet (macOS's sandbox-exec is designed for in docs/sandbox.md); refusing to run tools unsandboxed (docs/sandbox.md)",
      );
    } finally {
      Object.defineProperty(process, 'platform', platform);
    }
  });

  it('bwrap from PATH when neither the options nor TWYLT_SANDBOX_BWRAP name one; refused when PATH has none', async () => {
    const bin = emptyDir();
    writeFileSync(join(bin, 'bwrap'), `#!/bin/sh\n/bin/cat '${ok}.out'\n`);
    chmodSync(join(bin, 'bwrap'), 0o755);
    const found = await withPath(bin, () => prepareSandbox(NONE, { cgroup: null }));
    opened.push(found);
    expect(found.forTool().wrap([tool], { cwd: work }).command[0]).toBe(join(bin, 'bwrap'));
    const error = await withPath(emptyDir(), () => failure(prepareSandbox(NONE, { cgroup: null })));
    expect((error as Error).message).toBe('bubblewrap (bwrap) is not on PATH: install it (Debian: apt-get install bubblewrap); refusing to run tools unsandboxed (docs/sandbox.md)');
  });

  it('prlimit not on PATH: refused when a limit needs it, not when none does', async () => {
    const bin = emptyDir();
    const error = await withPath(bin, () => failure(prepareSandbox({ ...NONE, cpuSeconds: 5 }, { bwrap: ok, cgroup: null })));
    expect((error as Error).message).toBe('prlimit (util-linux) is not on PATH, and the limits need it; refusing to run tools unsandboxed (docs/sandbox.md)');
    const none = await withPath(bin, () => prepareSandbox(NONE, { bwrap: ok, cgroup: null }));
    opened.push(none);
    expect(none.limits).toBe('none');
  });

  it('a cgroup only for a memory or a process limit: with neither, none is made; a process limit alone has one with pids.max', async () => {
    const base: CgroupBase = { version: 2, dirs: [mkdtempSync(join(scratch, 'cg-'))] };
    const free = await prepared(NONE, base);
    expect(free.limits).toBe('none');
    expect(free.forTool().wrap([tool], { cwd: work }).command).toEqual([ok, ...bwrapArgs([], TOOL_MOUNTS), '--', tool]);
    expect(readdirSync(base.dirs[0]!)).toEqual([]);
    const counted = await prepared({ ...NONE, processes: 5 }, base);
    expect(counted.limits).toBe('cgroup');
    const before = new Set(readdirSync(base.dirs[0]!));
    expect(counted.forTool().wrap([tool], { cwd: work }).command).toEqual([ok, '--args', '3', '--', tool]);
    const call = join(base.dirs[0]!, readdirSync(base.dirs[0]!).find((name) => !before.has(name))!);
    expect(readdirSync(call)).toEqual(['pids.max']);
  });

  it("the dead consumers' call cgroups are swept as a sandbox is prepared, a live one's kept", async () => {
    const base: CgroupBase = { version: 2, dirs: [mkdtempSync(join(scratch, 'cg-'))] };
    // Above any pid_max (2^22): no such process.
    mkdirSync(join(base.dirs[0]!, 'twylt-2147483646-1'));
    mkdirSync(join(base.dirs[0]!, `twylt-${process.pid}-999999`));
    await prepared({ ...NONE, memoryMb: 8 }, base);
    expect(readdirSync(base.dirs[0]!)).toContain(`twylt-${process.pid}-999999`);
    expect(readdirSync(base.dirs[0]!)).not.toContain('twylt-2147483646-1');
    rmSync(join(base.dirs[0]!, `twylt-${process.pid}-999999`), { recursive: true });
  });

  it("the consumer's own cgroup (findCgroupBase) when the options name none", async () => {
    const sandbox = await prepareSandbox({ ...NONE, memoryMb: 64 }, { bwrap: ok });
    opened.push(sandbox);
    expect(sandbox.limits).toBe(findCgroupBase() ? 'cgroup' : 'rlimit');
  });

  it('not root: a process limit without a cgroup is an rlimit (--nproc), not a refusal', async () => {
    vi.spyOn(process, 'getuid').mockReturnValue(1000);
    try {
      const sandbox = await prepared({ ...NONE, processes: 5 });
      expect(sandbox.limits).toBe('rlimit');
      expect(sandbox.forTool().wrap([tool], { cwd: work }).command).toEqual(['/usr/bin/prlimit', '--core=0', '--nproc=5', '--', ok, ...bwrapArgs([], TOOL_MOUNTS), '--', tool]);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it("without a log of the consumer's, a refusal is a line on stderr", async () => {
    const sandbox = await prepareSandbox({ ...NONE, allowNet: ['example.com'] }, { bwrap: ok, cgroup: null });
    opened.push(sandbox);
    const wrapped = sandbox.forTool().wrap([tool], { cwd: work });
    const socket = wrapped.command[wrapped.command.indexOf('/run/twylt-proxy.sock') - 1]!;
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await connectRefused(socket);
      expect(stderr.mock.calls.map(([text]) => text)).toContain('twylt sandbox: refused a connection to evil.example:443 of the tool "tool": evil.example:443 is not an allowed host (--sandbox-allow-net)\n');
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('the probe: offline (no relay, no proxy socket) even for a consumer allowed a host; in a fresh empty folder, removed after', async () => {
    const record = join(scratch, 'probe-argv');
    await prepared({ ...NONE, allowNet: ['example.com'] }, null, recorder('recorder', record));
    const { readFileSync } = await import('node:fs');
    const argv = readFileSync(record, 'utf8').split('\0').slice(0, -1);
    expect(argv).not.toContain('/run/twylt-proxy.sock');
    const inside = argv.slice(argv.indexOf('--') + 1);
    expect(inside.slice(0, 2)).toEqual([process.execPath, '-e']);
    expect(inside[2]).toContain("readFileSync('/proc/self/status', 'utf8')");
    expect(inside).toHaveLength(3);
    const cwd = argv[argv.indexOf('--chdir') + 1]!;
    expect(dirname(cwd)).toBe(tmpdir());
    expect(cwd.startsWith(join(tmpdir(), 'twylt-sandbox-probe-'))).toBe(true);
    expect(existsSync(cwd)).toBe(false);
  });

  it('a probe whose folder is gone by its end (the tool removed it) is no failure', async () => {
    const file = fakeBwrap('remover', 'CapEff:\t0000000000000000\n');
    writeFileSync(file, `#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = --chdir ] && /bin/rmdir "$2"; shift; done\n/bin/cat '${file}.out'\n`);
    expect((await prepared(NONE, null, file)).limits).toBe('none');
  });

  it('a probe that cannot even be set up (a policy exposing /) is refused with the reason', async () => {
    const error = await failure(prepareSandbox({ ...NONE, allowRead: ['/'] }, { bwrap: ok, cgroup: null }));
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    expect((error as Error).message).toMatch(/^the sandbox cannot be set up: the sandbox refuses to expose \/: it is \/ or holds the home folder .*; refusing to run tools unsandboxed \(docs\/sandbox\.md\)$/);
  });
});

describe('a tool allowed some host: more rows', () => {
  it('TWYLT_DISABLE_NETWORK is offline only as a whole word (1, true, yes, on): 1x, x1 and 0 leave the relay on', async () => {
    const sandbox = await prepared({ ...NONE, allowNet: ['example.com'] });
    for (const value of ['1x', 'x1', 'yes please', '0']) {
      const wrapped = sandbox.forTool().wrap([tool], { cwd: work, env: { TWYLT_DISABLE_NETWORK: value } });
      expect(wrapped.env.HTTPS_PROXY, value).toBe('http://127.0.0.1:3128');
      expect(wrapped.command).toContain('/run/twylt-proxy.sock');
    }
  });

  it('the relay argv whole, with a runtime under /usr (no mount for it): the system mounts, /tmp, the tool, the socket, nothing else', async () => {
    const execPath = process.execPath;
    process.execPath = '/usr/bin/node';
    try {
      const sandbox = await prepared({ ...NONE, allowNet: ['example.com'] });
      const wrapped = sandbox.forTool().wrap([tool], { cwd: work });
      const dash = wrapped.command.indexOf('--', 1);
      const args = wrapped.command.slice(1, dash);
      const socket = args[args.indexOf('/run/twylt-proxy.sock') - 1]!;
      expect(args).toEqual([...HEAD, ...mountArgs(), '--tmpfs', '/tmp', '--dir', '/tmp/home', ...TOOL_MOUNTS, '--ro-bind', socket, '/run/twylt-proxy.sock', '--remount-ro', '/', '--chdir', work]);
      expect(wrapped.command.slice(dash + 1, dash + 3)).toEqual(['/usr/bin/node', '-e']);
    } finally {
      process.execPath = execPath;
    }
  });

  it('the proxy lets an allowed host through; the same proxy for the same hosts in another order or case; a new one after close()', async () => {
    const server = createServer((socket) => socket.end('upstream\n'));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    try {
      const sandbox = await prepared(NONE);
      const socketOf = (command: readonly string[]) => command[command.indexOf('/run/twylt-proxy.sock') - 1]!;
      const first = socketOf(sandbox.forTool({ name: 't', policy: { allowNet: ['b.example', `127.0.0.1:${port}`] } }).wrap([tool], { cwd: work }).command);
      const same = socketOf(sandbox.forTool({ name: 't', policy: { allowNet: [`127.0.0.1:${port}`, 'B.Example'] } }).wrap([tool], { cwd: work }).command);
      expect(dirname(same)).toBe(dirname(first));
      const answer = await new Promise<string>((done) => {
        const client = connect(first);
        let text = '';
        client.on('data', (chunk) => (text += chunk.toString()));
        client.on('close', () => done(text));
        client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
      });
      expect(answer).toBe('HTTP/1.1 200 Connection established\r\n\r\nupstream\n');
      await sandbox.close();
      // The same tool and hosts: a new proxy, not the closed one.
      const after = socketOf(sandbox.forTool({ name: 't', policy: { allowNet: ['b.example', `127.0.0.1:${port}`] } }).wrap([tool], { cwd: work }).command);
      expect(dirname(after)).not.toBe(dirname(first));
      expect(existsSync(after)).toBe(true);
    } finally {
      server.close();
    }
  });

  it("a session that cannot listen fails the wrap with the proxy's error, and the call's cgroup is removed", async () => {
    for (const base of [null, { version: 2, dirs: [mkdtempSync(join(scratch, 'cg-'))] } as CgroupBase]) {
      const sandbox = await prepared({ ...NONE, allowNet: ['example.com'], memoryMb: base ? 16 : 0 }, base);
      const first = sandbox.forTool().wrap([tool], { cwd: work });
      // With a cgroup the options (the socket among them) go on fd 3.
      const child = fakeChild();
      first.started(child.child);
      await new Promise((done) => setImmediate(done));
      const args = base ? child.written().split('\0') : first.command;
      const socket = args[args.indexOf('/run/twylt-proxy.sock') - 1]!;
      expect(socket).toMatch(/\/twylt-proxy-[^/]+\/call-1\.sock$/);
      // The proxy's own folder gone: its next session cannot listen.
      rmSync(dirname(socket), { recursive: true, force: true });
      // A plain folder keeps the limits' files, so rmdir fails there: the call to remove() is what is seen.
      const remove = vi.spyOn(CallCgroup.prototype, 'remove');
      expect(() => sandbox.forTool().wrap([tool], { cwd: work })).toThrow(/^the sandbox's proxy cannot listen on .*\/call-2\.sock$/);
      expect(remove).toHaveBeenCalledTimes(base ? 1 : 0);
      vi.restoreAllMocks();
    }
  });
});

describe("one launcher's calls", () => {
  it('each command its own mounts (the cache is per command, cwd and environment)', async () => {
    const other = join(scratch, 'other', 'bin', 'tool');
    mkdirSync(dirname(other), { recursive: true });
    writeFileSync(other, '#!/bin/sh\n');
    chmodSync(other, 0o755);
    const launcher = (await prepared(NONE)).forTool();
    expect(launcher.wrap([tool], { cwd: work }).command).toEqual([ok, ...bwrapArgs([], TOOL_MOUNTS), '--', tool]);
    const otherPrefix = join(scratch, 'other');
    expect(launcher.wrap([other], { cwd: work }).command).toEqual([ok, ...bwrapArgs([], ['--ro-bind', otherPrefix, otherPrefix, '--bind', work, work]), '--', other]);
  });

  it("a warm process's session, adopted by a call: its refusals are published in that call's context, not the one that opened it", async () => {
    const { AsyncLocalStorage } = await import('node:async_hooks');
    const call = new AsyncLocalStorage<string>();
    const sandbox = await prepared({ ...NONE, allowNet: ['example.com'] });
    const wrapped = call.run('the call that started it', () => sandbox.forTool({ name: 'warm' }).wrap([tool], { cwd: work }));
    call.run('the call that took it', () => wrapped.adopted?.());
    const socket = wrapped.command[wrapped.command.indexOf('/run/twylt-proxy.sock') - 1]!;
    const contexts: (string | undefined)[] = [];
    const listener = () => contexts.push(call.getStore());
    subscribe('twylt:sandbox:refusal', listener);
    try {
      await connectRefused(socket);
    } finally {
      unsubscribe('twylt:sandbox:refusal', listener);
    }
    expect(contexts).toEqual(['the call that took it']);
    // Offline there is no session: adopting and ending are no-ops.
    const offline = sandbox.forTool().wrap([tool], { cwd: work, env: { TWYLT_DISABLE_NETWORK: '1' } });
    expect(() => offline.adopted?.()).not.toThrow();
    expect(offline.ended(0, null)).toBeUndefined();
  });

  it("a relative certificate path is not mounted, even one that exists from the consumer's folder", async () => {
    const near = join(scratch, 'certs', 'near');
    mkdirSync(near, { recursive: true });
    const relativeNear = relative(process.cwd(), near);
    expect(existsSync(relativeNear)).toBe(true);
    const wrapped = (await prepared({ ...NONE, allowNet: ['example.com'] })).forTool().wrap([tool], { cwd: work, env: { SSL_CERT_DIR: `${relativeNear}:${certDir}`, SSL_CERT_FILE: relativeNear } });
    const text = wrapped.command.join(' ');
    expect(text).toContain(`--ro-bind ${certDir} ${certDir}`);
    expect(text).not.toContain(near);
  });

  it('a certificate file whose path has a colon is mounted whole (only SSL_CERT_DIR is a list)', async () => {
    const colon = join(scratch, 'ca:dir', 'ca.pem');
    mkdirSync(dirname(colon), { recursive: true });
    writeFileSync(colon, 'CA');
    const wrapped = (await prepared({ ...NONE, allowNet: ['example.com'] })).forTool().wrap([tool], { cwd: work, env: { NODE_EXTRA_CA_CERTS: colon } });
    expect(wrapped.command.join(' ')).toContain(`--ro-bind ${colon} ${colon}`);
  });
});

describe('limits and runtimes, more rows', () => {
  it("a tool's own policy without memory or process limits gets no call cgroup under a consumer that has one", async () => {
    const base: CgroupBase = { version: 2, dirs: [mkdtempSync(join(scratch, 'cg-'))] };
    const sandbox = await prepared({ ...NONE, memoryMb: 64 }, base);
    const before = readdirSync(base.dirs[0]!);
    const wrapped = sandbox.forTool({ policy: { memoryMb: 0, processes: 0 } }).wrap([tool], { cwd: work });
    expect(wrapped.command).toEqual([ok, ...bwrapArgs([], TOOL_MOUNTS), '--', tool]);
    expect(wrapped.extraPipes).toBe(0);
    expect(readdirSync(base.dirs[0]!)).toEqual(before);
  });

  it('with a cgroup, prlimit sets only the CPU time and core files: memory and processes are the cgroup\'s', async () => {
    const base: CgroupBase = { version: 2, dirs: [mkdtempSync(join(scratch, 'cg-'))] };
    const sandbox = await prepared({ cpuSeconds: 2, memoryMb: 64, processes: 5 }, base);
    expect(sandbox.forTool().wrap([tool], { cwd: work }).command).toEqual(['/usr/bin/prlimit', '--core=0', '--cpu=2:3', '--', ok, '--args', '3', '--', tool]);
  });

  it("the probe's call ends as a call does: its cgroup removed", async () => {
    const base: CgroupBase = { version: 2, dirs: [mkdtempSync(join(scratch, 'cg-'))] };
    const remove = vi.spyOn(CallCgroup.prototype, 'remove');
    try {
      await prepared({ ...NONE, memoryMb: 64 }, base);
      expect(remove).toHaveBeenCalledTimes(1);
    } finally {
      vi.restoreAllMocks();
    }
  });

  const runtimes: [string, () => string, (runtime: string) => string[]][] = [
    ['a runtime outside a bin folder: its own folder', () => join(scratch, 'rt', 'node'), (runtime) => ['--ro-bind', dirname(runtime), dirname(runtime)]],
    ['a runtime in a folder under /usr: none (a system folder)', () => '/usr/lib/os-release', () => []],
  ];
  for (const [what, runtime, mounts] of runtimes) {
    it(`the relay's runtime mounted for a tool allowed a host: ${what}`, async () => {
      const path = runtime();
      if (path.startsWith(scratch)) {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, '');
      }
      const execPath = process.execPath;
      process.execPath = path;
      try {
        const wrapped = (await prepared({ ...NONE, allowNet: ['example.com'] })).forTool().wrap([tool], { cwd: work });
        const args = wrapped.command.slice(1, wrapped.command.indexOf('--', 1));
        const socket = args[args.indexOf('/run/twylt-proxy.sock') - 1]!;
        // The read-only mounts shortest first (scratch/rt before scratch/prefix), then the workspace.
        expect(args).toEqual([...HEAD, ...mountArgs(), '--tmpfs', '/tmp', '--dir', '/tmp/home', ...mounts(path), ...TOOL_MOUNTS, '--ro-bind', socket, '/run/twylt-proxy.sock', '--remount-ro', '/', '--chdir', work]);
      } finally {
        process.execPath = execPath;
      }
    });
  }
});

describe('a bwrap that cannot be spawned, with a cgroup', () => {
  it('is refused as missing, and nothing is joined to the call cgroup for a process that never started', async () => {
    const base: CgroupBase = { version: 2, dirs: [mkdtempSync(join(scratch, 'cg-'))] };
    const missing = join(scratch, 'no-bwrap');
    const error = await prepareSandbox({ ...NONE, memoryMb: 64 }, { bwrap: missing, cgroup: base }).catch((thrown: Error) => thrown);
    expect((error as Error).message).toBe(`bubblewrap (${missing}) cannot make a sandbox here: spawn ${missing} ENOENT; refusing to run tools unsandboxed (docs/sandbox.md)`);
    const [call] = readdirSync(base.dirs[0]!);
    expect(readdirSync(join(base.dirs[0]!, call!)).sort()).toEqual(['memory.max', 'memory.swap.max']);
  });
});

describe.skipIf(SANDBOX_SKIP_REASON !== undefined)('the probe with the real bubblewrap', () => {
  it('passes with no capability left, under prlimit, /tmp sized', async () => {
    const sandbox = await prepared({ ...NONE, cpuSeconds: 30, memoryMb: 8192 }, null, '/usr/bin/bwrap');
    expect(sandbox.limits).toBe('rlimit');
  });

  it('passes with its options on fd 3 (a plain folder as the cgroup)', async () => {
    const base: CgroupBase = { version: 2, dirs: [mkdtempSync(join(scratch, 'cg-real-'))] };
    const sandbox = await prepared({ ...NONE, memoryMb: 64 }, base, '/usr/bin/bwrap');
    expect(sandbox.limits).toBe('cgroup');
  });
});

/** A CONNECT to a host no sandbox allows, through a tool's proxy socket: resolves once the proxy has answered and closed. */
function connectRefused(socket: string): Promise<void> {
  return new Promise<void>((done) => {
    const client = connect(socket);
    client.on('data', () => {});
    client.on('close', () => done());
    client.write('CONNECT evil.example:443 HTTP/1.1\r\n\r\n');
  });
}
