/**
 * Requirement installers: each distinct requirement set goes into its own environment in a
 * cache keyed by its content and the interpreter (`pip install --target`, `npm install
 * --prefix`), never into the user's site-packages or node_modules. An install runs in a
 * staging folder renamed into place when done: concurrent scans installing the same set
 * both finish, the first rename wins and the other's copy is dropped.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat, symlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { isRecord } from '../../protocol/record.js';
import type { Requirements } from '../../protocol/spec.js';
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
  /** The interpreter of Python tools, and its "major.minor" (part of a pip environment's key). */
  python: string;
  pythonVersion: () => Promise<string>;
}

/** The environment `requirements` need, or undefined when they declare nothing to install. */
export async function planEnv(requirements: unknown, context: InstallContext): Promise<EnvPlan | undefined> {
  if (!isRecord(requirements) || typeof requirements.content !== 'string') return undefined;
  const { tool, content } = requirements as unknown as Requirements;
  if (tool === 'pip') {
    const args = pipArguments(content);
    if (args.length === 0) return undefined;
    const dir = join(context.envsDir, `pip-${key(['pip', args, await context.pythonVersion()])}`);
    return { dir, command: [context.python, '-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--target', dir, ...args], env: { PYTHONPATH: dir } };
  }
  if (tool === 'npm') return planNpmEnv(npmSpecs(content), context);
  return undefined;
}

/**
 * An npm environment: `npm install --prefix` of the specs, twylt's own packages linked to the
 * scanning installation (own-packages.ts), keyed by both and the Node major. Its node_modules
 * goes into NODE_PATH, which the launcher makes ES module imports honour (ADR 0035).
 */
function planNpmEnv(allSpecs: string[], context: InstallContext): EnvPlan | undefined {
  const { specs, links } = planOwn(allSpecs);
  if (specs.length === 0 && Object.keys(links).length === 0) return undefined;
  const dir = join(context.envsDir, `npm-${key(['npm', specs, links, process.versions.node.split('.')[0]])}`);
  const command = specs.length === 0 ? [] : ['npm', 'install', '--no-audit', '--no-fund', '--omit=dev', '--prefix', dir, ...specs];
  return { dir, command, env: { NODE_PATH: join(dir, 'node_modules') }, links };
}

/** requirements.txt as pip arguments: comments and blank lines dropped, an option line split into its words. */
function pipArguments(content: string): string[] {
  return content
    .split(/\r?\n/)
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter((line) => line !== '')
    .flatMap((line) => (line.startsWith('-') ? line.split(/\s+/) : [line]));
}

/** The `dependencies` of a package.json text as `name@range`, sorted. */
function npmSpecs(content: string): string[] {
  let data: unknown;
  try {
    data = JSON.parse(content);
  } catch {
    return [];
  }
  const dependencies = isRecord(data) && isRecord(data.dependencies) ? data.dependencies : {};
  return Object.entries(dependencies)
    .filter((pair): pair is [string, string] => typeof pair[1] === 'string')
    .map(([name, range]) => `${name}@${range}`)
    .sort();
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

/** Fill the plan's environment unless it exists: install into a staging folder, then rename it into place. */
export async function installEnv(plan: EnvPlan, envsDir: string): Promise<InstallOutcome> {
  if (await envReady(plan)) return { ok: true, reused: true };
  await mkdir(envsDir, { recursive: true });
  const staging = join(envsDir, `.staging-${randomBytes(6).toString('hex')}`);
  const command = plan.command.map((arg) => (arg === plan.dir ? staging : arg));
  try {
    const failure = command.length === 0 ? await mkdir(staging).then(() => undefined) : await runInstaller(command);
    if (failure) return { ok: false, reason: failure };
    await linkPackages(staging, plan.links ?? {});
    try {
      await rename(staging, plan.dir);
    } catch (error) {
      // Another scan renamed the same environment into place first: use that one.
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !(await envReady(plan))) throw error;
    }
    return { ok: true, reused: false };
  } finally {
    await rm(staging, { recursive: true, force: true });
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

/** Run pip or npm; undefined when it succeeded, else the line of its output that says why. */
function runInstaller(command: string[]): Promise<string | undefined> {
  return new Promise((done) => {
    execFile(command[0]!, command.slice(1), { timeout: INSTALL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, PIP_NO_INPUT: '1' } }, (error, _stdout, stderr) => {
      if (!error) return done(undefined);
      const said = installerLine(String(stderr));
      done(said ?? `${command[0]} failed: ${error.message.split('\n')[0]}`);
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
