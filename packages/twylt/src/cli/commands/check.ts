/** `twylt check`: the conformance suite, as a table, JSON or JUnit XML. */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CHECK_DEFAULTS } from '../../conformance/types.js';
import { CLI_EXIT, HELP_OPTION, wrappingCommand } from '../command.js';
import { interruptible } from '../interrupt.js';
import { checkProgress, progressFor } from '../progress.js';
import { styleFor } from '../style.js';
import { SANDBOX_OPTIONS, openSandbox } from '../../toolset/sandbox/flags.js';
import { formatOptions, parseCount, type OptionSpec } from '../../toolset/option-spec.js';
import { parseTimeout } from './describe.js';

/** `twylt check`'s own flags, in help order; the sandbox's and --help follow. */
const CHECK_OPTIONS = {
  json: { type: 'boolean', help: 'print the report as JSON instead of a table' },
  junit: { type: 'string', value: 'FILE', help: 'also write the report as JUnit XML to FILE' },
  timeout: { type: 'string', value: 'MS', help: 'time-out of each run', byDefault: CHECK_DEFAULTS.timeoutMs },
  concurrency: { type: 'string', value: 'N', help: 'runs at once', byDefault: CHECK_DEFAULTS.concurrency },
  'tmp-root': { type: 'string', value: 'DIR', help: 'make the run directories inside DIR instead (e.g. /tmp)' },
  only: { type: 'string', multiple: true, value: 'PREFIX', help: 'run only the checks whose id starts with PREFIX (repeatable)' },
} as const satisfies Record<string, OptionSpec>;

const HELP = `twylt check: check that an executable honours TWYLT 1.8

Usage:
  twylt check [--json] [--junit FILE] [--timeout MS] [--only PREFIX]... [--sandbox...]
              -- <tool command...>

Runs the tool many times, each in a fresh, empty directory with stdin closed, and
reports every check as PASS, FAIL, WARN or SKIP with the evidence (what was sent, what
came back). The directories are made inside the current one (.twylt-check-*, removed
afterwards), so the command runs as typed here: npx, node --import tsx, uv run or a
tsconfig.json find this project. Arguments naming existing files are made absolute first.
A command that cannot start (not found, not executable, or it exits before saying
anything in TWYLT) stops the check after one message.

Options:
${formatOptions({ ...CHECK_OPTIONS, ...SANDBOX_OPTIONS, help: HELP_OPTION }, { column: 19 })}
Exit code: 0 when no check failed (warnings and skips allowed), 1 otherwise (the tool
could not start included), 64 for wrong usage, 130 (143, 129) when interrupted by
SIGINT (SIGTERM, SIGHUP).

Example:
  twylt check --junit twylt.xml -- python3 tool.py
`;

export const command = wrappingCommand({
  name: 'check',
  help: HELP,
  options: { ...CHECK_OPTIONS, ...SANDBOX_OPTIONS },
  async run(values, tool, io) {
    const concurrency = values.concurrency === undefined ? undefined : parseCount('--concurrency', values.concurrency, 1);
    const { checkTool, renderJunit, renderTable } = await import('../../conformance/index.js');
    // Each run's own directory is its workspace.
    const sandbox = await openSandbox(values, io.cwd);
    const progress = progressFor(io, 'check', values.json);
    // Ctrl-C ends the runs in flight, so that the run directories are removed before exiting.
    const report = await interruptible((signal) =>
      checkTool(tool, {
        cwd: io.cwd,
        timeoutMs: parseTimeout(values.timeout),
        concurrency,
        tmpRoot: values['tmp-root'] === undefined ? undefined : resolve(io.cwd, values['tmp-root']),
        only: values.only,
        signal,
        sandbox: sandbox?.forTool(),
        onCheck: checkProgress(progress),
      }),
    )
      .finally(progress.end)
      .finally(() => sandbox?.close());
    if (values.junit) await writeFile(resolve(io.cwd, values.junit), renderJunit(report));
    if (report.startFailure && !values.json) {
      // One message, not a table of the same failure.
      io.stderr.write(`twylt check: ${report.startFailure}\n`);
      return CLI_EXIT.failed;
    }
    io.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : renderTable(report, { color: styleFor(io.stdout, io.env).enabled }));
    return report.ok ? CLI_EXIT.ok : CLI_EXIT.failed;
  },
});
