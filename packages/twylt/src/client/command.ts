/**
 * Make a command independent of the working directory it will run in. The conformance
 * checker and file-mode calls run tools in fresh temporary directories, where a relative
 * script path such as `tools/echo.py` would no longer resolve.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

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
