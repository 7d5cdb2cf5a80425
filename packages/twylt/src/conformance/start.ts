/**
 * Did the command start a TWYLT tool at all? A command that cannot be started (not found, not
 * executable), or that dies before saying anything in TWYLT (npm's "could not determine
 * executable to run", a missing module, a syntax error), would fail every check the same
 * way: the suite stops after one clear message instead.
 */
import { parseErrorObject } from '../client/client.js';
import { reasonIndex } from '../client/errors.js';
import { preview } from './expect.js';
import type { Prober } from './probe.js';
import type { Evidence } from './types.js';

/**
 * A run that ended by itself without a word of TWYLT: nothing on stdout, no error object on
 * stderr. Any exit code: `python3 missing.py` exits 2, npm's errors 1.
 */
function silentExit(run: Evidence): boolean {
  const { exitCode, stdout, stderr, failure } = run.received;
  return failure === undefined && exitCode !== null && stdout.trim() === '' && parseErrorObject(stderr) === undefined;
}

/** What the command said about why: the line that says it (see reasonIndex) and the next, else its last lines. */
function reason(stderr: string): string {
  const lines = stderr.split('\n').map((line) => line.trimEnd()).filter((line) => line !== '');
  const at = reasonIndex(lines);
  return preview((at === -1 ? lines.slice(-3) : lines.slice(at, at + 2)).join('\n'));
}

/**
 * Why the command did not start a TWYLT tool, or undefined when it did. `first` is the
 * json_spec run; a silent exit there is confirmed with one more run (`--version`), so that a
 * tool whose json_spec alone is broken still gets the whole suite.
 */
export async function startFailure(command: readonly string[], first: Evidence, probe: Prober): Promise<string | undefined> {
  if (first.received.notStarted) return `the command cannot be started: ${first.received.failure}`;
  if (!silentExit(first)) return undefined;
  const second = await probe({ args: ['--version'] });
  if (!silentExit(second)) return undefined;
  return (
    `the command ${JSON.stringify(command.join(' '))} did not start a TWYLT tool: it exited with code ${first.received.exitCode} ` +
    `(and ${second.received.exitCode} for --version) without a result or an error object; it said: ${reason(first.received.stderr)}`
  );
}
