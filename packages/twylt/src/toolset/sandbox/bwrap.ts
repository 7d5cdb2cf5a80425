/**
 * The one sandbox driver (ADR 0032): each tool process runs under bubblewrap (`bwrap`) with
 * every namespace of its own (user, pid, net, ipc, uts, cgroup), no capability and no nested
 * user namespace (as root too), an allow-list of files (files.ts), a private /tmp and HOME of
 * a bounded size, an environment of its own, and limits (limits.ts plus rlimits through
 * prlimit(1)). `prepareSandbox()` checks once, before any tool starts, that all of it works
 * here, and refuses to start otherwise: never a silent unsandboxed run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants, tmpdir } from 'node:os';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import type { SandboxedProcess, SpawnSandbox } from '../../client/spawn.js';
import { SandboxUnavailableError } from './errors.js';
import { sandboxRefusalChannel, type SandboxRefusalMessage } from '../../events/channels.js';
import { findExecutable, systemMounts, toolMounts, type Mount } from './files.js';
import { CallCgroup, findCgroupBase, sweepCgroups, type CgroupBase, type LimitName } from './limits.js';
import { mergeSandboxPolicies, resolveSandboxPolicy, type ResolvedSandboxPolicy, type SandboxPolicy } from './policy.js';
import { evalCommand } from '../../protocol/runtime.js';
import { RELAY_PORT, SANDBOX_PROXY_SOCKET, startProxy, type FilteringProxy, type ProxySession, type RefusalLog } from './proxy.js';
import { relayMain, type RelaySettings } from './relay.js';

export { SandboxUnavailableError };

/** Where a sandboxed tool's private folders are (fresh tmpfs per call). */
const SANDBOX_TMP = '/tmp';
const SANDBOX_HOME = '/tmp/home';

/** The consumer's variables a tool gets without asking: the protocol's and a locale. */
const PASSED_ENV = [
  'PATH',
  'LANG',
  'LANGUAGE',
  'TZ',
  'INPUT_DESCRIBE',
  'TWYLT_ERROR_FORMAT',
  'TWYLT_DEBUG',
  'TOOLSPEC_ERROR_FORMAT',
  'TOOLSPEC_DEBUG',
  'TWYLT_GUARDRAILS',
  'TWYLT_WORKSPACE_ROOT',
  'TWYLT_ALLOWED_CWD',
  'TWYLT_DISABLE_NETWORK',
  'TWYLT_INCIDENT_LOG',
  'TWYLT_MAX_INPUT_BYTES',
  // Where the tool's own modules are: their folders are mounted read-only (files.ts).
  'PYTHONPATH',
  'NODE_PATH',
];

/**
 * The certificate bundles a machine configures, passed to a tool allowed some host with
 * their files mounted read-only: an allowed host behind a private CA works as outside.
 */
const CA_ENV = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'];

/** CapEff in /proc/self/status when every capability is dropped. */
const NO_CAPABILITIES = /^CapEff:\s*0+$/m;

/** A sandbox ready to start tools: one per consumer, shared by its tools. */
export interface PreparedSandbox {
  readonly policy: ResolvedSandboxPolicy;
  /** How a limit is enforced here: `cgroup` (v1 or v2), or `rlimit` per process. */
  readonly limits: 'cgroup' | 'rlimit' | 'none';
  /**
   * The launcher of one tool: its workspace (default: where each call runs) is writable,
   * `name` names it in refusals, and its own `policy` is merged over the consumer's (lists
   * joined). It reaches exactly the hosts of that merged policy, through a proxy of its own.
   */
  forTool(options?: { workspace?: string; name?: string; policy?: SandboxPolicy }): SpawnSandbox;
  /** Stop every proxy. */
  close(): Promise<void>;
}

export interface PrepareOptions {
  /** The bwrap executable (default: TWYLT_SANDBOX_BWRAP, else `bwrap` on PATH). */
  bwrap?: string;
  /**
   * The operator's log of network refusals (default: the line on stderr); a bridge that logs
   * JSON turns the refusal into an event of its own.
   */
  log?: RefusalLog;
  /** Where per-call cgroups are made (default: the consumer's own, findCgroupBase; null: none). Tests give a plain folder. */
  cgroup?: CgroupBase | null;
}

/**
 * Check that the sandbox works here (Linux, bwrap, namespaces, the limits asked for); each
 * tool's proxy starts with its first call. Throws SandboxUnavailableError with the reason.
 */
// Stryker disable next-line BooleanLiteral: `false` as the default is equivalent: resolveSandboxPolicy(false) reads every field as undefined and gives the defaults, as for `true`
export async function prepareSandbox(given: SandboxPolicy | true = true, options: PrepareOptions = {}): Promise<PreparedSandbox> {
  const policy = resolveSandboxPolicy(given);
  if (process.platform !== 'linux') {
    throw new SandboxUnavailableError(`--sandbox needs Linux with bubblewrap; ${process.platform} is not supported yet (macOS's sandbox-exec is designed for in docs/sandbox.md)`);
  }
  const bwrap = options.bwrap ?? process.env.TWYLT_SANDBOX_BWRAP ?? findExecutable('bwrap', process.cwd(), process.env.PATH);
  if (!bwrap) throw new SandboxUnavailableError('bubblewrap (bwrap) is not on PATH: install it (Debian: apt-get install bubblewrap)');
  const prlimit = findExecutable('prlimit', process.cwd(), process.env.PATH);
  const cgroup = policy.memoryMb > 0 || policy.processes > 0 ? (options.cgroup === undefined ? findCgroupBase() : (options.cgroup ?? undefined)) : undefined;
  if (cgroup) sweepCgroups(cgroup);
  // Stryker disable next-line OptionalChaining: process.getuid exists on Linux, the only platform that gets past the check above
  if (!cgroup && policy.processes > 0 && process.getuid?.() === 0) {
    throw new SandboxUnavailableError(
      'cannot limit processes: no writable cgroup here, and RLIMIT_NPROC does not bind root (--sandbox-processes 0 runs without that limit)',
    );
  }
  const needsPrlimit = policy.cpuSeconds > 0 || (!cgroup && (policy.memoryMb > 0 || policy.processes > 0));
  if (needsPrlimit && !prlimit) throw new SandboxUnavailableError('prlimit (util-linux) is not on PATH, and the limits need it');
  const driver = new Driver(policy, bwrap, needsPrlimit ? prlimit : undefined, cgroup, options.log ?? ((line) => process.stderr.write(`${line}\n`)));
  await driver.probe();
  return {
    policy,
    limits: cgroup ? 'cgroup' : needsPrlimit ? 'rlimit' : 'none',
    forTool: (tool = {}) => driver.forTool(tool),
    close: () => driver.close(),
  };
}

class Driver {
  readonly policy: ResolvedSandboxPolicy;
  readonly #bwrap: string;
  readonly #prlimit: string | undefined;
  readonly #cgroup: CgroupBase | undefined;
  readonly #log: RefusalLog;
  readonly #system: Mount[] = systemMounts();
  /** One proxy per tool name and allow-list: a tool's proxy allows its own hosts, no other tool's. */
  readonly #proxies = new Map<string, FilteringProxy>();

  constructor(policy: ResolvedSandboxPolicy, bwrap: string, prlimit: string | undefined, cgroup: CgroupBase | undefined, log: RefusalLog) {
    this.policy = policy;
    this.#log = log;
    this.#bwrap = bwrap;
    this.#prlimit = prlimit;
    this.#cgroup = cgroup;
  }

  /**
   * Read /proc/self/status in the sandbox, limits and all, on the consumer's own runtime:
   * whatever fails here would fail every call, and a sandbox that keeps a capability (bwrap
   * run by root keeps root's unless told otherwise) is no sandbox.
   */
  async probe(): Promise<void> {
    // Not `cat /proc/self/status`: a path on the command line is mounted as the tool's code.
    const status = evalCommand("process.stdout.write(process.getBuiltinModule('node:fs').readFileSync('/proc/self/status', 'utf8'))");
    // The consumer's own policy: a call's cgroup joined through bwrap's --args, /tmp sized, the rlimits.
    const launcher = this.forTool({});
    // An empty folder of its own as the workspace.
    const cwd = mkdtempSync(join(tmpdir(), 'twylt-sandbox-probe-'));
    let run: { failure?: string; status: string };
    try {
      // Offline: the probe starts no proxy and no relay.
      run = await runToEnd(launcher.wrap(status, { cwd, env: { TWYLT_DISABLE_NETWORK: '1' } }));
    } catch (error) {
      throw new SandboxUnavailableError(`the sandbox cannot be set up: ${(error as Error).message}`);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
    if (run.failure !== undefined) throw new SandboxUnavailableError(`bubblewrap (${this.#bwrap}) cannot make a sandbox here: ${run.failure}`);
    if (!NO_CAPABILITIES.test(run.status)) {
      const capabilities = /^CapEff:\s*(\S+)/m.exec(run.status)?.[1] ?? 'unknown';
      throw new SandboxUnavailableError(`bubblewrap (${this.#bwrap}) leaves the tool capabilities here (CapEff ${capabilities}, expected 0)`);
    }
  }

  forTool(tool: { workspace?: string; name?: string; policy?: SandboxPolicy }): SpawnSandbox {
    const policy = tool.policy ? resolveSandboxPolicy(mergeSandboxPolicies(this.policy, tool.policy)) : this.policy;
    const cache = new Map<string, Mount[]>();
    return {
      wrap: (command, options) => this.#wrap(command, options.cwd, options.env ?? {}, policy, tool, cache),
    };
  }

  async close(): Promise<void> {
    const proxies = [...this.#proxies.values()];
    this.#proxies.clear();
    await Promise.all(proxies.map((proxy) => proxy.close()));
  }

  /** The proxy of a tool's allow-list, started the first time one of its calls needs it. */
  #proxyFor(allowNet: readonly string[], tool: string | undefined): FilteringProxy {
    const hosts = [...new Set(allowNet.map((host) => host.toLowerCase()))].sort();
    const key = JSON.stringify([tool ?? null, hosts]);
    let proxy = this.#proxies.get(key);
    if (!proxy) {
      // Each refusal is counted and logged for the operator, with the tool and the host.
      proxy = startProxy(hosts, { tool, onRefusal: ({ host }) => refused('network', tool, host), log: this.#log });
      this.#proxies.set(key, proxy);
    }
    return proxy;
  }

  #wrap(
    command: readonly string[],
    cwd: string | undefined,
    declared: Readonly<Record<string, string | undefined>>,
    policy: ResolvedSandboxPolicy,
    tool: { workspace?: string; name?: string },
    cache: Map<string, Mount[]>,
  ): SandboxedProcess {
    const here = resolve(cwd ?? process.cwd());
    const env = this.#env(declared, policy);
    // A relay and a proxy only for a tool allowed some host, and never for one that is offline.
    // Stryker disable next-line StringLiteral: any other default for an unset TWYLT_DISABLE_NETWORK is equally no truthy spelling (not offline)
    const relay = policy.allowNet.length > 0 && !/^(1|true|yes|on)$/i.test(env.TWYLT_DISABLE_NETWORK ?? '');
    // Stryker disable next-line ArrayDeclaration: without a relay the certificates are read nowhere (the mounts add them only with a relay, and the cache key holds `relay` itself)
    const certificates = relay ? this.#networkEnv(env, declared) : [];
    const file = command[0]!;
    if (!findExecutable(file, here, env.PATH)) {
      // As an unsandboxed spawn reports it, not as bwrap's own exit 1.
      throw Object.assign(new Error(`spawn ${file} ENOENT`), { code: 'ENOENT', errno: -constants.errno.ENOENT, path: file });
    }
    const proxy = relay ? this.#proxyFor(policy.allowNet, tool.name) : undefined;
    const workspaces = [tool.workspace, env.TWYLT_WORKSPACE_ROOT].filter((dir): dir is string => dir !== undefined && dir !== '');
    const key = JSON.stringify([command, here, workspaces, env.PATH, env.PYTHONPATH, env.NODE_PATH, relay, certificates]);
    let mounts = cache.get(key);
    // Stryker disable next-line ConditionalExpression: the cache only saves computing the same list again (toolMounts is pure for a key)
    if (!mounts) {
      // The relay runs on the consumer's own runtime: its install prefix is readable too.
      const allowRead = relay ? [...policy.allowRead, ...runtimeFolder(), ...certificates] : policy.allowRead;
      mounts = toolMounts({ command, cwd: here, workspaces, env, allowRead, allowWrite: policy.allowWrite });
      // Stryker disable next-line CallExpression: the cache only saves computing the same list again (toolMounts is pure for a key)
      cache.set(key, mounts);
    }
    const cgroup = this.#cgroup && (policy.memoryMb > 0 || policy.processes > 0) ? new CallCgroup(this.#cgroup, policy.memoryMb, policy.processes) : undefined;
    const settings: RelaySettings = { socket: SANDBOX_PROXY_SOCKET, port: RELAY_PORT, command };
    // The call's own proxy session (its tunnels capped, ended with it), opened last: nothing below throws.
    let session: ProxySession | undefined;
    try {
      session = proxy?.open({ tool: tool.name, command });
    } catch (error) {
      cgroup?.remove();
      throw error;
    }
    const bwrapArgs = [
      // A user namespace always (root's too), no nested one, and no capability in it: as root,
      // bwrap would otherwise leave the tool root's capabilities (remounts, cgroupfs...).
      '--unshare-all',
      '--unshare-user',
      '--disable-userns',
      '--cap-drop',
      'ALL',
      '--die-with-parent',
      '--new-session',
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      ...mountArgs(this.#system),
      // Sized: where limits are rlimits, nothing else counts what /tmp holds.
      ...(policy.memoryMb > 0 ? ['--size', String(tmpBytes(policy.memoryMb))] : []),
      '--tmpfs',
      SANDBOX_TMP,
      '--dir',
      SANDBOX_HOME,
      ...mountArgs(mounts),
      ...(session ? ['--ro-bind', session.socket, SANDBOX_PROXY_SOCKET] : []),
      '--remount-ro',
      '/',
      '--chdir',
      here,
    ];
    // The relay's settings as its argument, not a variable (relay.ts).
    const inside = relay ? [...evalCommand(`(${relayMain.toString()})()`), JSON.stringify(settings)] : command;
    const launcher = this.#prlimit ? [this.#prlimit, ...this.#rlimits(policy), '--', this.#bwrap] : [this.#bwrap];
    return {
      // With a cgroup, bwrap reads its options from fd 3 (to its end) before it makes any
      // namespace: the consumer puts it in the call's cgroup first (joinThenRun).
      command: [...launcher, ...(cgroup ? ['--args', '3'] : bwrapArgs), '--', ...inside],
      cwd: here,
      env,
      extraPipes: cgroup ? 1 : 0,
      started: (child) => {
        if (cgroup) joinThenRun(child, cgroup, bwrapArgs, file);
      },
      adopted: () => session?.adopt(),
      ended: (exitCode) => {
        session?.close();
        let limit: LimitName | undefined;
        if (cgroup) {
          limit = cgroup.hit();
          cgroup.remove();
        }
        if (!limit && policy.cpuSeconds > 0 && exitCode === 128 + constants.signals.SIGXCPU) limit = 'cpu_time';
        if (limit && exitCode !== 0) {
          refused(limit, tool.name);
          return limit;
        }
        return undefined;
      },
      ...(this.#cgroup ? {} : { limitInOutput: (stderr: string) => rlimitHit(stderr, policy, tool.name) }),
    };
  }

  /** Only what the entry declares, the protocol's variables, those allowed, and the sandbox's own. */
  #env(declared: Readonly<Record<string, string | undefined>>, policy: ResolvedSandboxPolicy): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (value !== undefined && (PASSED_ENV.includes(name) || name.startsWith('LC_') || policy.allowEnv.includes(name))) env[name] = value;
    }
    for (const [name, value] of Object.entries(declared)) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
    env.HOME = SANDBOX_HOME;
    env.TMPDIR = SANDBOX_TMP;
    return env;
  }

  /**
   * What runtimes need to reach an allowed host, set in `env`: the relay as their proxy
   * (Node's fetch and node:http read it only with NODE_USE_ENV_PROXY=1, Node 22.21+ and 24+),
   * and the consumer's certificate bundles. The files those name, to mount read-only.
   */
  #networkEnv(env: Record<string, string>, declared: Readonly<Record<string, string | undefined>>): string[] {
    const url = `http://127.0.0.1:${RELAY_PORT}`;
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) env[name] = url;
    if (!('NODE_USE_ENV_PROXY' in declared)) env.NODE_USE_ENV_PROXY = '1';
    const files: string[] = [];
    for (const name of CA_ENV) {
      if (!(name in declared) && process.env[name]) env[name] = process.env[name]!;
      const value = env[name];
      if (value === undefined) continue;
      // SSL_CERT_DIR may name several folders.
      for (const path of name === 'SSL_CERT_DIR' ? value.split(delimiter) : [value]) {
        if (path && isAbsolute(path) && existsSync(path)) files.push(path);
      }
    }
    return files;
  }

  /** prlimit(1) options: CPU seconds, no core files, and the per-process fallbacks. */
  #rlimits(policy: ResolvedSandboxPolicy): string[] {
    const options = ['--core=0'];
    // SIGXCPU at the limit, SIGKILL a second later for a tool that ignores it.
    if (policy.cpuSeconds > 0) options.push(`--cpu=${policy.cpuSeconds}:${policy.cpuSeconds + 1}`);
    if (!this.#cgroup) {
      if (policy.memoryMb > 0) options.push(`--data=${policy.memoryMb * 1024 * 1024}`);
      if (policy.processes > 0) options.push(`--nproc=${policy.processes}`);
    }
    return options;
  }
}

/** The folder of the consumer's runtime, when it is not a system folder (a downloaded Node.js, Bun, Deno). */
function runtimeFolder(): string[] {
  const runtime = realpathSync(process.execPath);
  const dir = dirname(runtime);
  const prefix = basename(dir) === 'bin' ? dirname(dir) : dir;
  return prefix.startsWith('/usr/') || prefix === '/usr' ? [] : [prefix];
}

function mountArgs(mounts: readonly Mount[]): string[] {
  return mounts.flatMap((mount) =>
    mount.kind === 'symlink' ? ['--symlink', mount.target, mount.path] : [mount.kind === 'ro' ? '--ro-bind' : '--bind', mount.path, mount.path],
  );
}

/**
 * Put bwrap (prlimit execs it: the same pid) in the call's cgroup, then give it its
 * arguments on fd 3. bwrap reads them to their end before it makes any namespace, so the
 * tool's cgroup namespace is rooted at the call's cgroup: it cannot name, let alone enter,
 * the cgroups above it. A process that cannot be put there never gets its arguments: it is
 * killed, and the call fails as a spawn of `file` (the tool) that threw.
 */
function joinThenRun(child: ChildProcess, cgroup: CallCgroup, args: readonly string[], file: string): void {
  const argsPipe = child.stdio[3] as NodeJS.WritableStream & { destroy(): void };
  argsPipe.on('error', () => {});
  try {
    cgroup.join(child.pid!);
  } catch (error) {
    // Never let the tool run outside its limits.
    argsPipe.destroy();
    child.kill('SIGKILL');
    const { code, message } = error as NodeJS.ErrnoException;
    throw Object.assign(new Error(`spawn ${file} ${code ?? 'failed'}: the sandbox could not put it in its call's cgroup, so it never ran (${message})`, { cause: error }), { code });
  }
  argsPipe.end(args.map((arg) => `${arg}\0`).join(''));
}

/** /tmp's size: half the memory limit, so that a full /tmp and the tool's own memory fit in it together. */
function tmpBytes(memoryMb: number): number {
  return Math.max(1, Math.floor(memoryMb / 2)) * 1024 * 1024;
}

/** Run a wrapped command to its end (the probe): stdout, or why it failed. */
function runToEnd(wrapped: SandboxedProcess): Promise<{ failure?: string; status: string }> {
  const [file, ...args] = wrapped.command;
  return new Promise((done) => {
    const child = spawn(file!, args, { cwd: wrapped.cwd, env: wrapped.env, stdio: Array<'pipe'>(3 + wrapped.extraPipes).fill('pipe'), timeout: 10_000 });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error) => done({ failure: error.message, status: '' }));
    try {
      if (child.pid !== undefined) wrapped.started(child);
    } catch (error) {
      // Its cgroup could not be joined: the probe fails with why (the child was killed).
      wrapped.ended(null, null);
      // Stryker disable next-line StringLiteral: any status is equivalent: the probe reads the status only when there is no failure
      done({ failure: (error as Error).message, status: '' });
      return;
    }
    child.on('close', (code, signal) => {
      wrapped.ended(code, signal);
      done(code === 0 ? { status: stdout } : { failure: stderr.trim() || `exit ${code ?? signal}`, status: stdout });
    });
  });
}

/** What runtimes write when an rlimit refused them memory (RLIMIT_DATA) or a process (RLIMIT_NPROC). */
const OUT_OF_MEMORY = /out of memory|cannot allocate memory|\bENOMEM\b|\bMemoryError\b|allocation failed|memory allocation of \d+ bytes failed/i;
const OUT_OF_PROCESSES = /\bEAGAIN\b|resource temporarily unavailable/i;

/**
 * Without a cgroup the kernel counts no limit hit: a failed call ran into the memory or
 * processes rlimit when its stderr says so (the runtime's own message). A tool that prints
 * such a message itself only relabels its own failure.
 */
function rlimitHit(stderr: string, policy: ResolvedSandboxPolicy, tool: string | undefined): LimitName | undefined {
  const limit = policy.memoryMb > 0 && OUT_OF_MEMORY.test(stderr) ? 'memory' : policy.processes > 0 && OUT_OF_PROCESSES.test(stderr) ? 'processes' : undefined;
  if (limit) refused(limit, tool);
  return limit;
}

/** Publish a refusal for whoever counts them (observe/). */
function refused(reason: LimitName | 'network', tool: string | undefined, host?: string): void {
  if (!sandboxRefusalChannel.hasSubscribers) return;
  const message: SandboxRefusalMessage = { reason, ...(tool !== undefined ? { tool } : {}), ...(host !== undefined ? { host } : {}) };
  sandboxRefusalChannel.publish(message);
}
