/** Dispatch `twylt <command> ...` to the registered subcommand; turn usage errors into exit 64. */
import { CLI_EXIT, UsageError, type Io } from './command.js';
import { InterruptedError } from './interrupt.js';
import { COMMANDS } from './registry.js';
import { packageVersion } from './version.js';

export const HELP = `twylt: describe, call and check any TWYLT executable

Usage:
  twylt <command> [options] -- <tool command...>
  twylt --help | --version

Commands:
${COMMANDS.map((entry) => `  ${entry.name.padEnd(10)}${entry.summary}`).join('\n')}

Run "twylt <command> --help" for its options; "twylt --version" (-V, -v) prints the version.
The tool's own command line follows "--" and is run as an argument list, never through a
shell.

Exit codes: 0 success; 1 a check failed or the tool misbehaved; 64 wrong usage;
twylt call passes the tool's own exit code (2 to 6) through.
`;

export async function run(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.stderr : io.stdout).write(HELP);
    return name === undefined ? CLI_EXIT.usage : CLI_EXIT.ok;
  }
  if (name === '--version' || name === '-V' || name === '-v') {
    io.stdout.write(`twylt ${packageVersion()}\n`);
    return CLI_EXIT.ok;
  }
  const entry = COMMANDS.find((candidate) => candidate.name === name);
  if (!entry) {
    io.stderr.write(`twylt: unknown command "${name}"; commands: ${COMMANDS.map((c) => c.name).join(', ')}\nRun "twylt --help" for usage.\n`);
    return CLI_EXIT.usage;
  }
  try {
    const command = await entry.load();
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`twylt ${name}: ${error.message}\nRun "twylt ${name} --help" for usage.\n`);
      return CLI_EXIT.usage;
    }
    if (error instanceof InterruptedError) {
      io.stderr.write(`twylt ${name}: interrupted\n`);
      return error.exitCode;
    }
    // A message, not a stack trace: the commands report the tool's failures themselves.
    io.stderr.write(`twylt ${name}: ${(error as Error)?.message ?? String(error)}\n`);
    return CLI_EXIT.failed;
  }
}
