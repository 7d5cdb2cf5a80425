/**
 * The one sandbox driver (ADR 0032): each tool process runs under bubblewrap (`bwrap`) with
 * every namespace of its own (user, pid, net, ipc, uts, cgroup), an allow-list of files
 * (files.ts), a private /tmp and HOME, an environment of its own, and limits (limits.ts plus
 * rlimits through prlimit(1)). `prepareSandbox()` checks once, before any tool starts, that
 * all of it works here, and refuses to start otherwise: never a silent unsandboxed run.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { channel } from 'node:diagnostics_channel';
import { constants, tmpdir } from 'node:os';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { SandboxedProcess, SpawnSandbox } from '../../client/spawn.js';
import { findExecutable, systemMounts, toolMounts, type Mount } from './files.js';
import { CallCgroup, findCgroupBase, sweepCgroups, type CgroupBase, type LimitName } from './limits.js';
import { mergeSandboxPolicies, resolveSandboxPolicy, type ResolvedSandboxPolicy, type SandboxPolicy } from './policy.js';
import { evalCommand } from '../../protocol/runtime.js';
import { RELAY_PORT, SANDBOX_PROXY_SOCKET, startProxy, type FilteringProxy, type ProxySession } from './proxy.js';
import { RELAY_ENV, relayMain } from './relay.js';

/** The sandbox cannot work on this machine, and tools must not run without it. */
export class SandboxUnavailableError extends Error {
  constructor(message: string) {
    super(`${message}; refusing to run tools unsandboxed (docs/sandbox.md)`);
    this.name = 'SandboxUnavailableError';
  }
}

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
];

const REFUSAL_CHANNEL = 'twylt:sandbox:refusal';

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
}

/**
 * Check that the sandbox works here (Linux, bwrap, namespaces, the limits asked for); each
 * tool's proxy starts with its first call. Throws SandboxUnavailableError with the reason.
 */
export async function prepareSandbox(given: SandboxPolicy | true = true, options: PrepareOptions = {}): Promise<PreparedSandbox> {
  const policy = resolveSandboxPolicy(given);
  if (process.platform !== 'linux') {
    throw new SandboxUnavailableError(`--sandbox needs Linux with bubblewrap; ${process.platform} is not supported yet (macOS's sandbox-exec is designed for in docs/sandbox.md)`);
  }
  const bwrap = options.bwrap ?? process.env.TWYLT_SANDBOX_BWRAP ?? findExecutable('bwrap', process.cwd(), process.env.PATH);
  if (!bwrap) throw new SandboxUnavailableError('bubblewrap (bwrap) is not on PATH: install it (Debian: apt-get install bubblewrap)');
  const prlimit = findExecutable('prlimit', process.cwd(), process.env.PATH);
  const cgroup = policy.memoryMb > 0 || policy.processes > 0 ? findCgroupBase() : undefined;
  if (cgroup) sweepCgroups(cgroup);
  if (!cgroup && policy.processes > 0 && process.getuid?.() === 0) {
    throw new SandboxUnavailableError(
      'cannot limit processes: no writable cgroup here, and RLIMIT_NPROC does not bind root (--sandbox-processes 0 runs without that limit)',
    );
  }
  const needsPrlimit = policy.cpuSeconds > 0 || (!cgroup && (policy.memoryMb > 0 || policy.processes > 0));
  if (needsPrlimit && !prlimit) throw new SandboxUnavailableError('prlimit (util-linux) is not on PATH, and the limits need it');
  const driver = new Driver(policy, bwrap, needsPrlimit ? prlimit : undefined, cgroup);
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
  readonly #system: Mount[] = systemMounts();
  /** One proxy per tool name and allow-list: a tool's proxy allows its own hosts, no other tool's. */
  readonly #proxies = new Map<string, FilteringProxy>();

  constructor(policy: ResolvedSandboxPolicy, bwrap: string, prlimit: string | undefined, cgroup: CgroupBase | undefined) {
    this.policy = policy;
    this.#bwrap = bwrap;
    this.#prlimit = prlimit;
    this.#cgroup = cgroup;
  }

  /** Run `true` in the sandbox, limits and all: whatever fails here would fail every call. */
  async probe(): Promise<void> {
    const truth = findExecutable('true', '/', process.env.PATH ?? '/usr/bin:/bin');
    if (!truth) throw new SandboxUnavailableError('no `true` executable on PATH to try the sandbox with');
    // The limits' cgroup was tried by findCgroupBase; the probe joins none.
    const launcher = this.forTool({ policy: { memoryMb: 0, processes: 0 } });
    // An empty folder of its own as the workspace.
    const cwd = mkdtempSync(join(tmpdir(), 'twylt-sandbox-probe-'));
    let failure: string | undefined;
    try {
      // Offline: the probe starts no proxy and no relay.
      const wrapped = launcher.wrap([truth], { cwd, env: { TWYLT_DISABLE_NETWORK: '1' } });
      const [file, ...args] = wrapped.command;
      failure = await new Promise<string | undefined>((done) => {
        execFile(file!, args, { cwd: wrapped.cwd, env: wrapped.env, timeout: 10_000 }, (error, _stdout, stderr) =>
          done(error ? stderr.trim() || error.message : undefined),
        );
      });
    } catch (error) {
      throw new SandboxUnavailableError(`the sandbox cannot be set up: ${(error as Error).message}`);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
    if (failure !== undefined) throw new SandboxUnavailableError(`bubblewrap (${this.#bwrap}) cannot make a sandbox here: ${failure}`);
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
      proxy = startProxy(hosts, { tool, onRefusal: ({ host }) => refused('network', tool, host), log: (line) => process.stderr.write(`${line}\n`) });
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
    const relay = policy.allowNet.length > 0 && !/^(1|true|yes|on)$/i.test(env.TWYLT_DISABLE_NETWORK ?? '');
    if (relay) {
      const url = `http://127.0.0.1:${RELAY_PORT}`;
      for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) env[name] = url;
    }
    const file = command[0]!;
    if (!findExecutable(file, here, env.PATH)) {
      // As an unsandboxed spawn reports it, not as bwrap's own exit 1.
      throw Object.assign(new Error(`spawn ${file} ENOENT`), { code: 'ENOENT', errno: -constants.errno.ENOENT, path: file });
    }
    const proxy = relay ? this.#proxyFor(policy.allowNet, tool.name) : undefined;
    const workspaces = [tool.workspace, env.TWYLT_WORKSPACE_ROOT].filter((dir): dir is string => dir !== undefined && dir !== '');
    const key = JSON.stringify([command, here, workspaces, env.PATH, env.PYTHONPATH, env.NODE_PATH, relay]);
    let mounts = cache.get(key);
    if (!mounts) {
      // The relay runs on the consumer's own runtime: its install prefix is readable too.
      const allowRead = relay ? [...policy.allowRead, ...runtimeFolder()] : policy.allowRead;
      mounts = toolMounts({ command, cwd: here, workspaces, env, allowRead, allowWrite: policy.allowWrite });
      cache.set(key, mounts);
    }
    const cgroup = this.#cgroup && (policy.memoryMb > 0 || policy.processes > 0) ? new CallCgroup(this.#cgroup, policy.memoryMb, policy.processes) : undefined;
    // The call's own proxy session (its tunnels capped, ended with it), opened last: nothing below throws.
    let session: ProxySession | undefined;
    try {
      session = proxy?.open({ tool: tool.name, command });
    } catch (error) {
      cgroup?.remove();
      throw error;
    }
    const bwrapArgs = [
      '--unshare-all',
      '--die-with-parent',
      '--new-session',
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      ...mountArgs(this.#system),
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
      // The first process waits for fd 4 until it is in the call's cgroup (it is named on fd 3).
      ...(cgroup ? ['--info-fd', '3', '--block-fd', '4'] : []),
      '--',
      ...(relay ? evalCommand(`(${relayMain.toString()})()`) : command),
    ];
    if (relay) env[RELAY_ENV] = JSON.stringify({ socket: SANDBOX_PROXY_SOCKET, port: RELAY_PORT, command });
    const launcher = this.#prlimit ? [this.#prlimit, ...this.#rlimits(policy), '--', this.#bwrap] : [this.#bwrap];
    return {
      command: [...launcher, ...bwrapArgs],
      cwd: here,
      env,
      extraPipes: cgroup ? 2 : 0,
      started: (child) => {
        if (cgroup) joinWhenNamed(child, cgroup);
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

/** bwrap names its first process on fd 3; once that is in the cgroup, fd 4 lets it go on. */
function joinWhenNamed(child: ChildProcess, cgroup: CallCgroup): void {
  const info = child.stdio[3] as NodeJS.ReadableStream & { destroy(): void };
  const block = child.stdio[4] as NodeJS.WritableStream & { destroy(): void };
  let text = '';
  let joined = false;
  info.on('error', () => {});
  block.on('error', () => {});
  // Read to the end: bwrap writes more after the pid, and a closed pipe would kill it (SIGPIPE).
  info.on('data', (chunk: Buffer) => {
    if (joined) return;
    text += chunk.toString();
    const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
    if (!match) return;
    joined = true;
    try {
      cgroup.join(Number(match[1]));
      block.end('1');
    } catch {
      // Never let the tool run outside its limits.
      child.kill('SIGKILL');
    }
  });
  info.on('end', () => {
    info.destroy();
    if (!joined) block.destroy();
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
  const refusals = channel(REFUSAL_CHANNEL);
  if (refusals.hasSubscribers) refusals.publish({ reason, ...(tool !== undefined ? { tool } : {}), ...(host !== undefined ? { host } : {}) });
}
