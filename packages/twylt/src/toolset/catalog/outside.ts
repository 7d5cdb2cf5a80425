/**
 * What a scan runs outside any sandbox besides the describes: the consumer's own
 * interpreters, asked about themselves (`python3 -I -c`, `node -e`, `pip config list`,
 * `npm config get`). The folder a scan is started in may be a pack: Python's `-m` and `-c`
 * put the working directory first on `sys.path`, so a pack's `pip/__main__.py` there would
 * run as the operator. Each of these runs isolated (`-I`: no working directory on
 * `sys.path`, no `PYTHON*` variables, no user site-packages) and from `/`, where no pack
 * chooses what a relative lookup finds.
 */
import { execFile } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';

/** Where they run: never a folder a pack could have written. */
export const NEUTRAL_CWD = '/';

/** The stdout of `file args` run from NEUTRAL_CWD; throws its last line of stderr, naming `what`. */
export function outsideOutput(file: string, args: readonly string[], what: string): Promise<string> {
  return new Promise((done, fail) => {
    execFile(file, args, { cwd: NEUTRAL_CWD, timeout: 60_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) fail(new Error(`${what}: ${(stderr.trim().split('\n').at(-1) || error.message).trim()}`));
      else done(stdout);
    });
  });
}

/** A Python interpreter as it says it is: its real executable and its "major.minor". */
export interface Interpreter {
  executable: string;
  version: string;
}

/**
 * The interpreter `python` really runs (`sys.executable`): a version manager's shim
 * (pyenv's writes its shims folder after `pip install`, which a sandbox refuses) is
 * resolved outside, once, and the installs run the interpreter itself. When it cannot
 * answer, `python` as given and version "unknown" (its install then fails with its own line).
 */
export async function resolvePython(python: string): Promise<Interpreter> {
  try {
    const code = 'import sys; print(sys.executable); print("%d.%d" % sys.version_info[:2])';
    // Stryker disable next-line StringLiteral: equivalent, it only words an error this function swallows
    const what = `${python} -I -c`;
    const [executable, version] = (await outsideOutput(commandPath(python), ['-I', '-c', code], what)).trim().split('\n');
    if (executable && isAbsolute(executable) && version) return { executable, version };
  } catch {
    // Not there, or not Python: the install says so.
  }
  return { executable: commandPath(python), version: 'unknown' };
}

/**
 * A command as a path that holds wherever it runs: `venv/bin/python3` relative to `cwd`
 * becomes absolute; a bare name (`python3`, looked up in PATH) and an absolute path stay.
 */
export function commandPath(command: string, cwd: string = process.cwd()): string {
  return command.includes('/') && !isAbsolute(command) ? resolve(cwd, command) : command;
}
