/**
 * Running the code under test as another user (nobody, 65534) from a test run as root
 * (issue 38). nobody cannot read the checkout when a folder above it is private (a clone in a
 * 0700 `mktemp -d` folder, in /root, in a 0700 home), so a test never hands nobody a path in
 * the checkout: it asks for `unprivilegedCopy()`, a world-readable copy, in a temporary folder
 * of its own, of the built packages (packages/* /dist and package.json), the production
 * node_modules they need (package-lock.json's entries not marked dev) and the files it names.
 * Where that cannot work, `UNPRIVILEGED_SKIP_REASON` says exactly why.
 *
 * scripts/test-unprivileged-clone.mjs runs every test file that imports this module from a
 * clone inside a 0700 folder (`.ci/run` does).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { ROOT } from './process.js';

/** The user and group the unprivileged cases run as. */
export const NOBODY = { uid: 65534, gid: 65534 } as const;

/** argv prefix that runs a command as user and group `id`, with no supplementary groups. */
export function asUser(id: number): string[] {
  return ['setpriv', `--reuid=${id}`, `--regid=${id}`, '--clear-groups', '--'];
}

/** argv prefix that runs a command as nobody, with no supplementary groups. */
export const AS_NOBODY: readonly string[] = asUser(NOBODY.uid);

/**
 * An unprivileged user with no name, for a test whose limits count per user (RLIMIT_NPROC counts
 * every process and thread of the user, system-wide): another test file running as nobody at
 * the same time must not use up its count. Its access is the same as nobody's (others' bits).
 */
export const NAMELESS_USER = 65533;

/** Whether every folder from `/` down to `path` lets others through (o+x), and `path` itself lets them read. */
function othersReach(path: string, mask: number): boolean {
  let current = path;
  for (;;) {
    const { mode } = statSync(current);
    if ((mode & (current === path ? mask : 0o001)) === 0) return false;
    const parent = dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

/** A folder nobody can reach, for the copies: the temporary folder unless it is private. */
function publicTemporaryFolder(): string | undefined {
  for (const candidate of [tmpdir(), '/tmp', '/var/tmp', '/dev/shm']) {
    try {
      if (othersReach(candidate, 0o001)) return candidate;
    } catch {
      // absent: the next one
    }
  }
  return undefined;
}

const BASE = publicTemporaryFolder();

function skipReason(): string | undefined {
  if (process.platform !== 'linux') return `running as another user uses setpriv (Linux), and this is ${process.platform}`;
  if (process.getuid?.() !== 0) return `only root can run a process as nobody, and the tests run as uid ${process.getuid?.()}`;
  if (BASE === undefined) return `no temporary folder that nobody can reach (${tmpdir()}, /tmp, /var/tmp, /dev/shm are private or absent)`;
  const probe = spawnSync(AS_NOBODY[0]!, [...AS_NOBODY.slice(1), process.execPath, '-e', 'process.stdout.write(String(process.getuid()))'], { encoding: 'utf8' });
  if (probe.error) return `setpriv (util-linux) cannot run: ${probe.error.message}`;
  if (probe.status !== 0 || probe.stdout !== String(NOBODY.uid)) {
    return `nobody cannot run this Node.js (${process.execPath}; a folder above it is private?): ${probe.stderr.trim() || `exit ${probe.status}`}`;
  }
  return undefined;
}

/** Why the unprivileged cases cannot run here, or undefined when they can. */
export const UNPRIVILEGED_SKIP_REASON = skipReason();

/** A world-readable copy of the built packages (and named files) that nobody can run. */
export interface UnprivilegedCopy {
  /** The copy's root, laid out as the checkout: `packages/`, `node_modules/`, the named files. */
  readonly root: string;
  /** The copy of a path given relative to the checkout's root. */
  path(relativePath: string): string;
  /** A folder of its own in the copy (mode 0755) that nobody can reach, for scratch files. */
  scratch(name: string): string;
  /** Remove the copy. */
  remove(): void;
}

/** The package-lock.json entries a production install has: node_modules/x, packages/y/node_modules/z. */
function productionModules(): { path: string; link?: string }[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; devOptional?: boolean; link?: boolean; resolved?: string }> };
  const modules: { path: string; link?: string }[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.includes('node_modules/') || entry.dev || entry.devOptional) continue;
    modules.push(entry.link ? { path, link: entry.resolved! } : { path });
  }
  return modules;
}

/** Let everyone read every file and enter every folder under `path` (a umask of 077 would not). */
function openUp(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if (stat.isDirectory()) {
    chmodSync(path, stat.mode | 0o555);
    for (const entry of readdirSync(path)) openUp(join(path, entry));
  } else {
    chmodSync(path, stat.mode | 0o444 | (stat.mode & 0o100 ? 0o111 : 0));
  }
}

/**
 * Copy the built packages, their production node_modules and `files` (paths relative to the
 * checkout: files or folders, `build/` outputs included) into a new world-readable folder.
 * Throws when the packages are not built. Call it in `beforeAll`, and `remove()` in `afterAll`.
 */
export function unprivilegedCopy(files: readonly string[] = []): UnprivilegedCopy {
  if (BASE === undefined) throw new Error(UNPRIVILEGED_SKIP_REASON);
  const root = mkdtempSync(join(BASE, 'twylt-nobody-'));
  const copy = (relativePath: string) => {
    const source = join(ROOT, relativePath);
    if (!existsSync(source)) throw new Error(`${source} is missing: run npm run build first`);
    mkdirSync(dirname(join(root, relativePath)), { recursive: true });
    cpSync(source, join(root, relativePath), { recursive: true, verbatimSymlinks: true });
  };
  for (const name of readdirSync(join(ROOT, 'packages'))) {
    copy(join('packages', name, 'package.json'));
    copy(join('packages', name, 'dist'));
  }
  for (const module of productionModules()) {
    if (module.link) {
      mkdirSync(dirname(join(root, module.path)), { recursive: true });
      symlinkSync(relative(dirname(join(root, module.path)), join(root, module.link)), join(root, module.path));
    } else if (existsSync(join(ROOT, module.path))) {
      copy(module.path);
    }
  }
  copy('package.json');
  for (const file of files) copy(file);
  openUp(root);
  return {
    root,
    path: (relativePath) => join(root, relativePath),
    scratch: (name) => {
      const folder = join(root, 'scratch', name);
      mkdirSync(folder, { recursive: true, mode: 0o755 });
      chmodSync(join(root, 'scratch'), 0o755);
      chmodSync(folder, 0o755);
      return folder;
    },
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * pip's configuration from files as root's `interpreter` reads it (`-I -m pip config list`,
 * its `:env:` lines left out: nobody inherits the PIP_* variables), as one pip.conf, for a
 * test to write into nobody's XDG_CONFIG_HOME: root's own file is under /root (0700), which
 * nobody cannot read, and a test never changes the machine's. `pip config list` prints values
 * as Python strings.
 */
export function pipConfigOf(interpreter: string): string {
  const listed = execFileSync(interpreter, ['-I', '-m', 'pip', 'config', 'list'], { cwd: '/', encoding: 'utf8' });
  const sections = new Map<string, string[]>();
  for (const line of listed.split('\n')) {
    const match = /^([\w-]+)\.([\w-]+)=(['"])(.*)\3$/.exec(line);
    if (!match) continue;
    const value = match[4]!.replace(/\\(.)/g, (_all, escaped: string) => (escaped === 'n' ? '\n  ' : escaped));
    sections.set(match[1]!, [...(sections.get(match[1]!) ?? []), `${match[2]} = ${value}`]);
  }
  return [...sections].map(([section, lines]) => `[${section}]\n${lines.join('\n')}\n`).join('\n');
}

/** Make `path` and everything under it nobody's own: what nobody can write outside a sandbox. */
export function giveToNobody(path: string): void {
  chownSync(path, NOBODY.uid, NOBODY.gid);
  if (lstatSync(path).isDirectory()) for (const entry of readdirSync(path)) giveToNobody(join(path, entry));
}
