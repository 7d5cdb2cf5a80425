/**
 * Run a command as typed where the caller stands, even in a working directory of its own.
 * The conformance checker and file-mode calls run tools in fresh directories, where a
 * relative script path such as `tools/echo.py` would no longer resolve, and where npx or
 * `node --import tsx` would not find the caller's project unless the directory is inside it.
 */
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * Each argument that is a relative path to an existing file or directory under `baseDir`
 * (and does not start with `-`) becomes absolute; everything else is kept as is. The
 * program itself is made absolute only when it is written as a path (`./tool`), never
 * when it is a name looked up on PATH (`python3`).
 */
export function resolveCommand(command: readonly string[], baseDir: string = process.cwd()): string[] {
  return command.map((arg, i) => {
    if (arg === '' || arg.startsWith('-') || isAbsolute(arg)) return arg;
    if (i === 0 && !arg.includes('/') && !arg.includes('\\')) return arg;
    const candidate = resolve(baseDir, arg);
    return existsSync(candidate) ? candidate : arg;
  });
}

/**
 * A new directory `<prefix>XXXXXX` inside `cwd`, so that a command that looks for its
 * project from its working directory (npx, `node --import tsx`, uv, a tsconfig.json) finds
 * the caller's; in the OS temp dir when `cwd` is not writable. The caller removes it.
 */
export async function freshDirectoryIn(cwd: string, prefix: string): Promise<string> {
  try {
    return await mkdtemp(join(cwd, prefix));
  } catch {
    return await mkdtemp(join(tmpdir(), prefix.replace(/^\./, '')));
  }
}
