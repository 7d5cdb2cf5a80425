/**
 * Requirement installers: each distinct requirement set goes into its own environment in a
 * cache keyed by its content and the interpreter (`pip install --target`, `npm install
 * --prefix`), never into the user's site-packages or node_modules; npm runs no install
 * scripts unless allowed. An install runs in a
 * staging folder renamed into place when done: concurrent scans installing the same set
 * both finish, the first rename wins and the other's copy is dropped. With --sandbox, each
 * install runs in a sandbox of its own (sandboxed-install.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, symlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { firstLine } from '../../client/errors.js';
import { killTool, limitHit, spawnTool, type SpawnSandbox } from '../../client/spawn.js';
import { isRecord } from '../../protocol/record.js';
import type { Requirements } from '../../protocol/spec.js';
import type { Interpreter } from './outside.js';
import { planOwn } from './own-packages.js';

/** The environment variable naming the cache of environments. */
export const ENVS_DIR_ENV = 'TWYLT_ENVS_DIR';

/** An install stops after this long: pip or npm stuck on a network is a failure, not a hang. */
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** `$TWYLT_ENVS_DIR`, else `${XDG_CACHE_HOME:-~/.cache}/twylt/envs`. */
export function defaultEnvsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env[ENVS_DIR_ENV]) return env[ENVS_DIR_ENV];
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'twylt', 'envs');
}

/** One environment: where it goes, the command that fills it, what a call of the tool needs. */
export interface EnvPlan {
  /** The installer that fills it. */
  installer: 'pip' | 'npm';
  dir: string;
  /** The exact install command, with `dir` as its target. */
  command: string[];
  /** Added to the tool's environment: PYTHONPATH or NODE_PATH. */
  env: Record<string, string>;
  /** npm: packages linked into node_modules, name -> folder, after the install (own-packages.ts). */
  links?: Record<string, string>;
}

export interface InstallContext {
  envsDir: string;
  /**
   * The interpreter of Python tools, resolved to the executable itself (outside.ts): pip
   * runs on it, and its "major.minor" is part of a pip environment's key.
   */
  python: () => Promise<Interpreter>;
  /** Let npm run the install scripts (preinstall, install, postinstall) of the packages it installs. */
  allowInstallScripts?: boolean;
}

/** Why a tool's requirements cannot be installed as they are: its row says so, nothing runs. */
export interface Refused {
  problem: string;
}

/**
 * The environment `requirements` need, undefined when they declare nothing to install, or
 * why they are refused. Requirements are data a tool publishes: each becomes one argument
 * after `--`, and any text an installer could read as an option is refused, never passed.
 */
export async function planEnv(requirements: unknown, context: InstallContext): Promise<EnvPlan | Refused | undefined> {
  if (!isRecord(requirements) || typeof requirements.content !== 'string') return undefined;
  const { tool, content } = requirements as unknown as Requirements;
  if (tool === 'pip') return planPip(content, context);
  if (tool === 'npm') return planNpm(content, context);
  return undefined;
}

/**
 * pip: `python -I -m pip install --target DIR -- SPEC...` with the interpreter of the scan,
 * isolated (`-I`): nothing of its working directory or `PYTHON*` variables is imported.
 */
async function planPip(content: string, context: InstallContext): Promise<EnvPlan | Refused | undefined> {
  const specs = pipSpecs(content);
  if ('problem' in specs) return specs;
  if (specs.specs.length === 0) return undefined;
  const python = await context.python();
  const dir = join(context.envsDir, `pip-${key(['pip', specs.specs, python.version])}`);
  return {
    installer: 'pip',
    dir,
    command: [python.executable, '-I', '-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--target', dir, '--', ...specs.specs],
    env: { PYTHONPATH: dir },
  };
}

/**
 * requirements.txt as requirement specifiers, one per line (comments and blank lines
 * dropped). A specifier starts with a project name or a URL scheme, a letter or digit: a line
 * that starts otherwise (`--target DIR`, `-r FILE`, `-e PATH`, `./local`) or carries an
 * option after the name (`pkg --hash=...`) is refused, naming the line.
 */
function pipSpecs(content: string): { specs: string[] } | Refused {
  const specs: string[] = [];
  for (const raw of content.split(/\r?\n/)) {
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (line === '') continue;
    if (!/^[A-Za-z0-9]/.test(line) || /\s-/.test(line)) {
      return { problem: `its requirements line ${JSON.stringify(clip(line))} is not a requirement specifier (options, files and paths are never taken from a tool's requirements)` };
    }
    specs.push(line);
  }
  return { specs };
}

/**
 * npm: `npm install --prefix DIR -- NAME@RANGE...`, install scripts off unless allowed;
 * twylt's own packages linked to the scanning installation instead (own-packages.ts). Its
 * node_modules goes into NODE_PATH, which the launcher makes ES module imports honour (ADR 0035).
 */
function planNpm(content: string, context: InstallContext): EnvPlan | Refused | undefined {
  const all = npmSpecs(content);
  if ('problem' in all) return all;
  const { specs, links } = planOwn(all.specs);
  if (specs.length === 0 && Object.keys(links).length === 0) return undefined;
  const scripts = context.allowInstallScripts ? [] : ['--ignore-scripts'];
  // Scripts allowed or not is part of the key: an environment made without them differs.
  const dir = join(context.envsDir, `npm-${key(['npm', specs, links, process.versions.node.split('.')[0], ...scripts])}`);
  return {
    installer: 'npm',
    dir,
    command: specs.length === 0 ? [] : ['npm', 'install', '--no-audit', '--no-fund', '--omit=dev', ...scripts, '--prefix', dir, '--', ...specs],
    env: { NODE_PATH: join(dir, 'node_modules') },
    links,
  };
}

/** A package name npm accepts (lower case, optionally scoped; old names may have capitals). */
const NPM_NAME = /^(?:@[A-Za-z0-9~][\w.~-]*\/)?[A-Za-z0-9~][\w.~-]*$/;

/** The `dependencies` of a package.json text as `name@range`, sorted; a name that is not a package name is refused. */
function npmSpecs(content: string): { specs: string[] } | Refused {
  let data: unknown;
  try {
    data = JSON.parse(content);
    // Stryker disable next-line BlockStatement: equivalent, data left undefined has no dependencies either, so the specs are empty as returned
  } catch {
    return { specs: [] };
  }
  const dependencies = isRecord(data) && isRecord(data.dependencies) ? data.dependencies : {};
  const specs: string[] = [];
  for (const [name, range] of Object.entries(dependencies)) {
    if (typeof range !== 'string') continue;
    if (!NPM_NAME.test(name) || name.length > 214) return { problem: `its npm dependency ${JSON.stringify(clip(name))} is not a package name (options are never taken from a tool's requirements)` };
    if (/\s/.test(range)) return { problem: `the range of its npm dependency "${name}" (${JSON.stringify(clip(range))}) contains white space` };
    specs.push(`${name}@${range}`);
  }
  return { specs: specs.sort() };
}

/** At most 80 characters of text quoted in a reason. */
function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function key(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
}

/** The plan in words: its command, then its links. */
export function planText(plan: EnvPlan): string {
  const links = Object.entries(plan.links ?? {}).map(([name, folder]) => `a link ${join(plan.dir, 'node_modules', name)} -> ${folder}`);
  return [plan.command.join(' '), ...links].filter((part) => part !== '').join(', then ');
}

/** Whether the environment is installed already (a second scan reuses it). */
export async function envReady(plan: EnvPlan): Promise<boolean> {
  try {
    return (await stat(plan.dir)).isDirectory();
  } catch {
    return false;
  }
}

/** Outcome of an install: done (`reused` when it was there already), or pip's or npm's own line. */
export type InstallOutcome = { ok: true; reused: boolean } | { ok: false; reason: string };

/**
 * Where an install command runs: as the scan itself (the default), or in a sandbox
 * (sandboxed-install.ts) with the environment it gets there. `staging` is the folder the
 * command installs into, and its working directory: the one folder it writes.
 */
export type InstallPlace = (command: string[], staging: string) => Promise<{ command: string[]; sandbox?: SpawnSandbox; env: NodeJS.ProcessEnv }>;

/** The scan's own rights and variables. */
const unsandboxed: InstallPlace = async (command) => ({ command, env: { ...process.env, PIP_NO_INPUT: '1' } });

/** Fill the plan's environment unless it exists: install into a staging folder, then rename it into place. Never throws: any failure is the outcome. */
export async function installEnv(plan: EnvPlan, envsDir: string, place: InstallPlace = unsandboxed): Promise<InstallOutcome> {
  let staging: string | undefined;
  try {
    if (await envReady(plan)) return { ok: true, reused: true };
    await mkdir(envsDir, { recursive: true });
    staging = join(envsDir, `.staging-${randomBytes(6).toString('hex')}`);
    const command = plan.command.map((arg) => (arg === plan.dir ? staging! : arg));
    // Made here, not by the installer: a sandbox lets an install write only a folder that exists.
    await mkdir(staging);
    if (command.length > 0) {
      const failure = await runInstaller(await place(command, staging), staging);
      if (failure) return { ok: false, reason: failure };
      if ((await readdir(staging)).length === 0) return { ok: false, reason: `${plan.command[0]} succeeded but left nothing in the environment folder` };
    }
    await linkPackages(staging, plan.links ?? {});
    try {
      await rename(staging, plan.dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another scan renamed the same environment into place first: use that one.
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !(await envReady(plan))) throw error;
    }
    return { ok: true, reused: false };
  } catch (error) {
    return { ok: false, reason: firstLine((error as Error).message) };
  } finally {
    if (staging) await rm(staging, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** The links of a plan, made inside the staging folder before it is renamed into place. */
async function linkPackages(staging: string, links: Record<string, string>): Promise<void> {
  for (const [name, folder] of Object.entries(links)) {
    const at = join(staging, 'node_modules', name);
    await mkdir(dirname(at), { recursive: true });
    await symlink(folder, at, 'dir');
  }
}

/** At most this much of an installer's stderr is kept: the line that says why is near its end. */
const MAX_STDERR = 1024 * 1024;

/**
 * Run pip or npm in `staging` (in its sandbox, when it has one: there, where a process runs
 * is writable, so never the scan's own folder); undefined when it succeeded, else the line
 * of its output that says why.
 */
function runInstaller({ command, sandbox, env }: Awaited<ReturnType<InstallPlace>>, staging: string): Promise<string | undefined> {
  return new Promise((done) => {
    const child = spawnTool(command, { cwd: staging, env, sandbox });
    let stderr = '';
    child.stdin.end();
    child.stdout.resume();
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-MAX_STDERR);
    });
    // pip or npm stuck on a network is a failure, not a hang.
    const timer = setTimeout(() => killTool(child), INSTALL_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      done(`${command[0]} failed: ${error.message.split('\n')[0]}`);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return done(undefined);
      // Its stderr too: without a cgroup, a limit shows only there (a runtime's out-of-memory line).
      const limit = limitHit(child, stderr);
      if (limit) return done(`${command[0]} ran into the sandbox's ${limit} limit (--sandbox-memory, --sandbox-processes, --sandbox-cpu-seconds)`);
      const ended = signal ? `killed by ${signal}` : `exit ${code}`;
      done(installerLine(stderr) ?? `${command[0]} failed (${ended})`);
    });
  });
}

/** pip's last `ERROR:` line, npm's first `npm error` line that is not just a code; else the last line. */
export function installerLine(stderr: string): string | undefined {
  const lines = stderr.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '');
  const pip = lines.filter((line) => line.startsWith('ERROR:')).at(-1);
  const npm = lines.find((line) => /^npm (error|ERR!)/.test(line) && !/^npm (error|ERR!) code\b/.test(line));
  return pip ?? npm ?? lines.at(-1);
}
