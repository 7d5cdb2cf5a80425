/**
 * Which of the host's files a sandboxed tool sees (ADR 0032): an allow-list. The system's
 * runtime folders and a few files of /etc read-only; the tool's executable, interpreter and
 * code read-only; its workspace read-write; nothing else. Never `/`, the consumer's home
 * folder or one of its ancestors: a root-owned 0600 key is readable by owner match inside the
 * sandbox, so the list must not reach it.
 */
import { accessSync, closeSync, constants, existsSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { SandboxPolicyError } from './errors.js';

export type Mount = { kind: 'ro' | 'rw'; path: string } | { kind: 'symlink'; path: string; target: string };

/** Folders a program loads from. Where one is a link (/bin -> usr/bin), the link is recreated. */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** What of /etc programs read to start: loader, users, time zone, certificates, alternatives. */
const ETC_FILES = [
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'passwd',
  'group',
  'nsswitch.conf',
  'hosts',
  'localtime',
  'timezone',
  'mime.types',
  'protocols',
  'services',
  'os-release',
  'debian_version',
  'gitconfig',
  'ca-certificates',
  'ca-certificates.conf',
  // Only the public parts: /etc/ssl/private holds keys.
  'ssl/certs',
  'ssl/openssl.cnf',
  'pki/tls/certs',
  'pki/ca-trust',
  'crypto-policies',
].map((name) => `/etc/${name}`);

/** Files that mark the root of a tool's project or pack. */
const PROJECT_MARKERS = ['package.json', 'pyproject.toml', 'setup.py', 'requirements.txt', 'deno.json', 'twylt-pack.json', '.git'];

/** The mounts that never change: system folders and /etc. */
export function systemMounts(): Mount[] {
  const mounts: Mount[] = [];
  for (const path of SYSTEM_DIRS) {
    const stat = lstatSafe(path);
    if (!stat) continue;
    if (stat.isSymbolicLink()) mounts.push({ kind: 'symlink', path, target: readlinkSync(path) });
    else if (stat.isDirectory()) mounts.push({ kind: 'ro', path });
  }
  for (const path of ETC_FILES) if (existsSync(path)) mounts.push({ kind: 'ro', path });
  return mounts;
}

export interface ToolFiles {
  command: readonly string[];
  /** Where the tool runs: always writable. */
  cwd: string;
  /** The workspace (the entry's cwd, TWYLT_WORKSPACE_ROOT): writable. */
  workspaces: readonly string[];
  /** The tool's PATH, PYTHONPATH, NODE_PATH. */
  env: Readonly<Record<string, string | undefined>>;
  allowRead: readonly string[];
  allowWrite: readonly string[];
}

export { SandboxPolicyError };

/**
 * The tool's own mounts: its executable's install prefix and interpreter, the code its
 * command line names (with its project and the node_modules folders above it), PYTHONPATH
 * and NODE_PATH, the extra paths allowed, then its workspace. Sorted so that a deeper mount
 * lands on a shallower one.
 *
 * A path the tool's own files choose (a symbolic link in its folder or in a node_modules, a
 * relative executable, a script's `#!` line) is followed only into what is allowed already:
 * the system folders, the consumer's choices (a PATH lookup, allowRead, allowWrite, the
 * workspace) and the projects of the code; a node_modules link also into the project folder
 * holding that node_modules (npm workspaces). Never outward: a pack that ships
 * `node_modules/x -> ~/.ssh` gets a dangling link, not the key.
 */
export function toolMounts(files: ToolFiles): Mount[] {
  // HOME as this thread sees it (what homedir() reads, but a worker thread's copy too: the tests run in one).
  const home = safeRealpath(process.env.HOME || homedir());
  const read = new Set<string>();
  const write = new Set<string>();
  /** Already allowed: a system folder, or inside a mount chosen so far. */
  const allowed = (path: string) => isSystem(path) || [...read, ...write].some((root) => isInside(path, root));

  // What the consumer chose: its PATH lookup (or an absolute path it wrote), the tool's
  // environment, the paths it allows, the workspace.
  const file = files.command[0]!;
  const executable = findExecutable(file, files.cwd, files.env.PATH);
  const chosenByTool = file.includes('/') && !isAbsolute(file);
  if (!chosenByTool) {
    for (const path of executableFiles(executable)) {
      if (!isSystem(path)) read.add(installPrefix(path, home));
    }
  }
  // PYTHONPATH and NODE_PATH are the entry's (or an install's) environment, not the pack's files.
  for (const name of ['PYTHONPATH', 'NODE_PATH']) {
    // Stryker disable next-line StringLiteral: any other text for an unset variable is one relative entry, which is ignored as '' is
    for (const entry of (files.env[name] ?? '').split(delimiter)) {
      const real = entry && isAbsolute(entry) ? safeRealpath(entry) : undefined;
      const root = real ? codeRoot(real, home) : undefined;
      if (root) read.add(root);
    }
  }
  for (const path of files.allowRead) read.add(checkedPath(path, home));
  for (const path of [files.cwd, ...files.workspaces, ...files.allowWrite]) write.add(checkedPath(path, home));

  // What the tool's files choose: each path's own project, and where it links only if allowed.
  const addCode = (path: string) => {
    const root = ownRoot(path, home);
    if (root) read.add(root);
  };
  // A relative executable: its own project; where it links and its #! interpreter only if mounted already.
  if (chosenByTool && executable) addCode(executable);
  for (const arg of files.command.slice(1)) {
    if (arg.startsWith('-') || arg.startsWith('{')) continue;
    const path = resolve(files.cwd, arg);
    addCode(path);
  }
  // Node.js resolves packages from every node_modules folder above the code, and follows
  // the links in them (npm workspaces, npm link) to where the packages really are.
  for (const root of [...read]) {
    for (let dir = root; ; dir = dirname(dir)) {
      const modules = safeRealpath(join(dir, 'node_modules'));
      // A node_modules that is itself a link is followed as its links are.
      const holder = exposes(dir, home) ? undefined : dir;
      const reachable = (target: string) => !exposes(target, home) && (allowed(target) || (holder !== undefined && isInside(target, holder)));
      if (modules && !read.has(modules) && (modules === join(dir, 'node_modules') || reachable(modules))) {
        read.add(modules);
        for (const target of linkedPackages(modules)) if (reachable(target)) read.add(target);
      }
      if (dirname(dir) === dir) break;
    }
  }

  const mounts: Mount[] = [...minimal(read)].filter((path) => !write.has(path)).map((path) => ({ kind: 'ro' as const, path }));
  mounts.push(...[...write].map((path) => ({ kind: 'rw' as const, path })));
  return mounts.sort((a, b) => depth(a.path) - depth(b.path));
}

/**
 * The project of a path the tool's files name, found from where the path is written, not
 * from where it links to: a link out of that project dangles inside the sandbox.
 */
function ownRoot(path: string, home: string | undefined): string | undefined {
  const stat = lstatSafe(path);
  if (!stat) return undefined;
  const folder = safeRealpath(stat.isDirectory() ? path : dirname(path));
  if (!folder) return undefined;
  // A file right in the home folder (or `/`): the file alone, never its folder; a link there, nothing.
  return codeRoot(folder, home) ?? (stat.isFile() ? join(folder, basename(path)) : undefined);
}

/**
 * Where the linked packages of a node_modules folder are: the node_modules folder holding
 * each target (one mount for many links), else the target itself.
 */
function linkedPackages(modules: string): string[] {
  const targets = new Set<string>();
  const visit = (dir: string, scoped: boolean) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      if (!scoped && name.startsWith('@')) visit(path, true);
      else if (lstatSafe(path)?.isSymbolicLink()) {
        const target = safeRealpath(path);
        if (!target) continue;
        const at = target.lastIndexOf(`${sep}node_modules${sep}`);
        targets.add(at === -1 ? target : target.slice(0, at + `${sep}node_modules`.length));
      }
    }
  };
  visit(modules, false);
  return [...targets].filter((target) => target !== modules);
}

/** The executable a command runs, as PATH finds it (undefined: not found). */
export function findExecutable(file: string, cwd: string, path: string | undefined): string | undefined {
  if (file.includes('/')) return resolve(cwd, file);
  // Stryker disable next-line StringLiteral: any other text for an unset PATH is one relative folder without the tool, as '' is none
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = resolve(cwd, dir, file);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The executable as found and as resolved, and a script's interpreter (`#!/abs/path`). */
function executableFiles(executable: string | undefined): string[] {
  if (!executable) return [];
  const real = safeRealpath(executable);
  const files = [executable];
  if (real) files.push(real);
  const interpreter = real ? shebang(real) : undefined;
  if (interpreter) files.push(interpreter, safeRealpath(interpreter) ?? interpreter);
  return files;
}

function shebang(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(256);
    const length = readSync(fd, head, 0, head.length, 0);
    const line = head.subarray(0, length).toString('latin1').split('\n')[0]!;
    const match = /^#!\s*(\/\S+)/.exec(line);
    return match?.[1];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The folder an executable was installed in: `<prefix>/bin/python3` gives `<prefix>` (a
 * venv, a pyenv version, a Node.js download), `<root>/shims/python3` gives `<root>` (pyenv).
 */
function installPrefix(file: string, home: string | undefined): string {
  const dir = dirname(file);
  const base = dir.split(sep).pop();
  const prefix = base === 'bin' || base === 'shims' ? dirname(dir) : dir;
  return exposes(prefix, home) ? file : prefix;
}

/**
 * The project a code file belongs to (its nearest folder with a project marker), else its
 * folder; where that folder is the home folder or `/`, the file alone, and for such a folder
 * itself nothing (issue 34: `node ~/tool.js` mounted the whole home folder).
 */
function codeRoot(path: string, home: string | undefined): string | undefined {
  const start = statSync(path).isDirectory() ? path : dirname(path);
  for (let dir = start; !exposes(dir, home); dir = dirname(dir)) {
    if (PROJECT_MARKERS.some((marker) => existsSync(join(dir, marker)))) return dir;
    if (dirname(dir) === dir) break;
  }
  if (!exposes(start, home)) return start;
  return exposes(path, home) ? undefined : path;
}

/** An allowed path, resolved; refused when it would expose the home folder or `/`. */
function checkedPath(path: string, home: string | undefined): string {
  const real = safeRealpath(resolve(path)) ?? resolve(path);
  if (exposes(real, home)) throw new SandboxPolicyError(`the sandbox refuses to expose ${real}: it is / or holds the home folder ${home}; name a folder inside it`);
  return real;
}

/** `/`, the home folder or one of its ancestors. */
function exposes(dir: string, home: string | undefined): boolean {
  return dir === '/' || (home !== undefined && (home === dir || home.startsWith(dir.endsWith(sep) ? dir : dir + sep)));
}

/** `path` is `root` or inside it. */
function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function isSystem(path: string): boolean {
  return SYSTEM_DIRS.some((dir) => path === dir || path.startsWith(dir + sep));
}

/** Paths without those already inside another one of the set. */
function minimal(paths: Set<string>): string[] {
  const sorted = [...paths].sort((a, b) => a.length - b.length);
  const kept: string[] = [];
  for (const path of sorted) if (!kept.some((dir) => path === dir || path.startsWith(dir + sep))) kept.push(path);
  return kept;
}

function depth(path: string): number {
  return path.split(sep).length;
}

function lstatSafe(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function safeRealpath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
