/** `twylt describe`: what a tool publishes, as a readable summary or raw. */
import { TwyltClient, TwyltClientError, resolveCommand } from '../../client/index.js';
import { DESCRIBE_ENV, DESCRIBE_MODES, isDescribeMode } from '../../protocol/constants.js';
import { formatJson } from '../../protocol/render.js';
import { DEFAULT_TIMEOUT_MS } from '../../client/process.js';
import { formatOptions, parseDuration, type OptionSpec } from '../../toolset/option-spec.js';
import { CLI_EXIT, HELP_OPTION, UsageError, wrappingCommand } from '../command.js';
import { interruptible } from '../interrupt.js';
import { renderFailure, renderSpec } from '../render.js';
import { styleFor } from '../style.js';

/** `twylt describe`'s flags, in help order. */
const DESCRIBE_OPTIONS = {
  mode: { type: 'string', value: 'M', help: `print the raw output of one describe mode: ${DESCRIBE_MODES.join(', ')}` },
  json: { type: 'boolean', help: 'print the raw json_spec (same as --mode json_spec)' },
  env: { type: 'boolean', help: `ask through ${DESCRIBE_ENV} instead of a {"describe": ...} payload` },
  // The client's own default: describe sets none.
  timeout: { type: 'string', value: 'MS', help: 'kill the tool after MS milliseconds', byDefault: DEFAULT_TIMEOUT_MS },
  help: HELP_OPTION,
} as const satisfies Record<string, OptionSpec>;

const HELP = `twylt describe: print what a tool publishes

Usage:
  twylt describe [--mode M] [--json] [--env] [--timeout MS] -- <tool command...>

Without options, a readable summary of the json_spec: name, version, description,
requirements, input and output fields (type, * for required, description, default,
constraints) and the examples.

Options:
${formatOptions(DESCRIBE_OPTIONS, { column: 17, width: 120 })}
Example:
  twylt describe -- python3 tool.py
  twylt describe --mode schema -- node tool.js
`;

export const command = wrappingCommand({
  name: 'describe',
  help: HELP,
  options: DESCRIBE_OPTIONS,
  async run(values, tool, io) {
    if (values.mode !== undefined && !isDescribeMode(values.mode)) {
      throw new UsageError(`--mode must be one of ${DESCRIBE_MODES.join(', ')}; got "${values.mode}"`);
    }
    const mode = values.mode ?? (values.json ? 'json_spec' : undefined);
    const client = new TwyltClient(resolveCommand(tool, io.cwd), { cwd: io.cwd, timeoutMs: parseTimeout(values.timeout) });
    const via = values.env ? 'env' : 'json';
    try {
      // Ctrl-C kills the tool, which runs in its own process group, before twylt exits.
      const text = await interruptible(async (signal) => {
        if (mode === 'brief') return `${await client.describe('brief', { via, signal })}\n`;
        if (mode) return `${formatJson(await client.describe(mode, { via, numbers: 'text', signal }))}\n`;
        return renderSpec(await client.describe('json_spec', { via, signal }), styleFor(io.stdout, io.env));
      });
      io.stdout.write(text);
      return CLI_EXIT.ok;
    } catch (error) {
      if (!(error instanceof TwyltClientError)) throw error;
      io.stderr.write(renderFailure(error, styleFor(io.stderr, io.env)));
      return CLI_EXIT.failed;
    }
  },
});

/** `--timeout MS`, if given, by the rule of every command (parseDuration: whole milliseconds). */
export function parseTimeout(value: string | undefined, option = '--timeout'): number | undefined {
  return value === undefined ? undefined : parseDuration(option, value);
}
