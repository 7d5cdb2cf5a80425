/**
 * `twylt scan --install --sandbox`: each install runs in a sandbox of its own (ADR 0032), as
 * the describes do, since a pip sdist's build code and an allowed npm install script are code
 * from the pack. An install reads what the sandbox allows, the pack, and the files its
 * installer's configuration names (local indexes, a constraints file); it writes only its
 * staging folder (and a private /tmp and HOME); it reaches only the hosts that configuration
 * names (its registries) through the sandbox's filtering proxy. The operator's
 * `--sandbox-allow-*` flags apply on top. The configuration is read outside the sandbox,
 * isolated from the scanned folders (outside.ts), and handed in as variables: the user's
 * home and config files stay out.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PreparedSandbox } from '../sandbox/bwrap.js';
import type { ResolvedSandboxPolicy } from '../sandbox/policy.js';
import type { EnvPlan, InstallPlace } from './install.js';
import { type Interpreter, outsideOutput } from './outside.js';

type Installer = EnvPlan['installer'];

/** What an installer's configuration needs inside the sandbox. */
export interface InstallerAccess {
  /** The configuration, as the installer's own variables. */
  env: Record<string, string>;
  /** Files and folders it names (local indexes, wheels, constraints). */
  read: string[];
  /** Hosts it names, as `--sandbox-allow-net` takes them. */
  hosts: string[];
}

/** PyPI's index, and the host it serves its files from. */
const PYPI_HOSTS = ['pypi.org', 'files.pythonhosted.org'];

/** The sandboxes of a scan's installs: one per installer, prepared at its first install, with the scan's policy widened by the installer's configuration. */
export class InstallSandboxes {
  readonly #policy: ResolvedSandboxPolicy;
  readonly #python: () => Promise<Interpreter>;
  readonly #prepared = new Map<Installer, Promise<{ sandbox: PreparedSandbox; env: Record<string, string> }>>();

  /** `python`: the scan's interpreter, resolved (its pip's configuration is the one read). */
  constructor(policy: ResolvedSandboxPolicy, python: () => Promise<Interpreter>) {
    this.#policy = policy;
    this.#python = python;
  }

  /** Where an install of `installer` for the pack in `pack` runs: that folder readable, its staging folder (its working directory) the one writable. */
  place(installer: Installer, pack: string): InstallPlace {
    return async (command, staging) => {
      const { sandbox, env } = await this.#prepare(installer);
      const allowRead = [...sandbox.policy.allowRead, pack];
      return { command: joinedTarget(command, staging), env, sandbox: sandbox.forTool({ workspace: staging, name: `${installer} install`, policy: { allowRead } }) };
    };
  }

  async close(): Promise<void> {
    const all = await Promise.allSettled(this.#prepared.values());
    await Promise.all(all.map((one) => (one.status === 'fulfilled' ? one.value.sandbox.close() : undefined)));
  }

  #prepare(installer: Installer) {
    let prepared = this.#prepared.get(installer);
    if (!prepared) {
      prepared = (async () => {
        const access = installer === 'pip' ? await pipAccess((await this.#python()).executable) : await npmAccess();
        const trust = trustAccess();
        const { prepareSandbox } = await import('../sandbox/bwrap.js');
        const policy = this.#policy;
        const sandbox = await prepareSandbox({ ...policy, allowRead: [...policy.allowRead, ...access.read, ...trust.read], allowNet: [...policy.allowNet, ...access.hosts] });
        return { sandbox, env: { ...trust.env, ...access.env } };
      })();
      this.#prepared.set(installer, prepared);
    }
    return prepared;
  }
}

/**
 * `--target DIR` as `--target=DIR`: the sandbox reads each path argument as code and mounts
 * its project read-only, and the staging folder must stay the one writable folder.
 */
function joinedTarget(command: string[], staging: string): string[] {
  const at = command.indexOf(staging);
  if (at < 1 || !command[at - 1]!.startsWith('--')) return command;
  return [...command.slice(0, at - 1), `${command[at - 1]}=${staging}`, ...command.slice(at + 1)];
}

/**
 * pip's configuration as `pip config list` merges it (its files and PIP_* variables), given
 * as PIP_* variables with its config files off (PIP_CONFIG_FILE=/dev/null); the paths and
 * hosts its values name; PyPI unless `index-url` or `no-index` replace it. pip runs
 * isolated (`-I`) from `/`: a `pip/__main__.py` where the scan was started is never imported.
 */
export async function pipAccess(python: string): Promise<InstallerAccess> {
  const listed = await output(python, ['-I', '-m', 'pip', 'config', 'list'], 'pip config list');
  const config = pipConfig(listed);
  const env: Record<string, string> = { PIP_NO_INPUT: '1', PIP_CONFIG_FILE: '/dev/null' };
  for (const [name, value] of config) env[`PIP_${name.toUpperCase().replace(/-/g, '_')}`] = value;
  const { read, hosts } = named([...config.values()]);
  const offIndex = /^(1|true|yes|on)$/i.test(config.get('no-index') ?? '');
  if (!config.has('index-url') && !offIndex) hosts.push(...PYPI_HOSTS);
  if (hosts.includes('pypi.org') && !hosts.includes('files.pythonhosted.org')) hosts.push('files.pythonhosted.org');
  return { env, read, hosts: [...new Set(hosts)] };
}

/** Which section wins: a PIP_* variable over `[install]` over `[global]`; others are other commands'. */
const PIP_SECTIONS: Record<string, number> = { global: 1, install: 2, ':env:': 3 };

/** The lines of `pip config list` (`section.key='value'`) as key -> value, the winning section's. */
export function pipConfig(listed: string): Map<string, string> {
  const config = new Map<string, { rank: number; value: string }>();
  for (const line of listed.split(/\r?\n/)) {
    const match = /^([^.=]*)\.([\w-]+)=(.*)$/.exec(line.trim());
    const rank = match ? PIP_SECTIONS[match[1]!] : undefined;
    // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent when a line matches: another section's rank is undefined, and `n <= undefined` below is false, so it is never set
    if (!match || rank === undefined) continue;
    const key = match[2]!;
    // Stryker disable next-line EqualityOperator: equivalent, `pip config list` lists each section's key once, so equal ranks never meet
    if ((config.get(key)?.rank ?? 0) <= rank) config.set(key, { rank, value: pythonString(match[3]!) });
  }
  return new Map([...config].map(([key, { value }]) => [key, value]));
}

/** A Python string literal as `repr()` writes it ('...' or "..."), unquoted. */
function pythonString(literal: string): string {
  const quoted = /^(['"])(.*)\1$/s.exec(literal);
  if (!quoted) return literal;
  return quoted[2]!.replace(/\\(.)/g, (_, char: string) => ({ n: '\n', t: '\t', r: '\r' })[char] ?? char);
}

/** The certificate authorities the scan trusts: an install reaches its registry through the same TLS inspection, if any. */
const TRUST_VARIABLES = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR'];

function trustAccess(env: NodeJS.ProcessEnv = process.env): Pick<InstallerAccess, 'env' | 'read'> {
  const given = Object.fromEntries(TRUST_VARIABLES.flatMap((name) => (env[name] ? [[name, env[name]]] : [])));
  return { env: given, read: named(Object.values(given)).read };
}

/** npm's registry (`npm config get registry`, asked from / so that no project's .npmrc chooses it), as npm_config_registry. */
export async function npmAccess(): Promise<InstallerAccess> {
  const registry = (await output('npm', ['config', 'get', 'registry'], 'npm config get registry')).trim();
  const { hosts } = named([registry]);
  return { env: { npm_config_registry: registry }, read: [], hosts };
}

/**
 * The absolute paths (plain or `file://`) that exist and the hosts of the http(s) URLs in
 * configuration values. A local index named `simple` is read with its parent folder: an
 * index's pages link to files beside it (`../../files/...`), as PEP 503 mirrors lay them out.
 */
function named(values: readonly string[]): { read: string[]; hosts: string[] } {
  const read: string[] = [];
  const hosts: string[] = [];
  // Stryker disable next-line Regex: equivalent, splitting on each white space character only adds empty words, which are neither URLs nor absolute paths
  for (const word of values.flatMap((value) => value.split(/\s+/))) {
    if (/^https?:\/\//i.test(word)) {
      const host = URL.canParse(word) ? new URL(word).host : '';
      if (host) hosts.push(host);
      continue;
    }
    const url = /^file:\/\//i.test(word) && URL.canParse(word);
    const path = url ? fileURLToPath(word) : word;
    if (isAbsolute(path) && existsSync(path)) read.push(url && basename(path) === 'simple' ? dirname(path) : path);
  }
  return { read, hosts };
}

/** The stdout of a command run from `/`; throws its last line of stderr, naming what was asked. */
function output(file: string, args: string[], what: string): Promise<string> {
  return outsideOutput(file, args, `cannot read the installer's configuration (${what})`);
}
