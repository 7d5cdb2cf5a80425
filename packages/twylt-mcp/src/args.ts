/**
 * The `twylt-mcp` command line: bridge options first, then one `--` before each tool's
 * command. Pure: turns argv into a plan, reads no files.
 *
 *   twylt-mcp [--config FILE]... [--timeout MS] [--max-output-bytes N] [-- CMD [ARG...]]...
 */
import { parseArgs } from 'node:util';
import { splitArgv } from 'twylt/toolset';

export interface CliPlan {
  help: boolean;
  version: boolean;
  /** Config files, in the order given. */
  configs: string[];
  /** Tools given after `--`, each an argv. */
  commands: string[][];
  /** Defaults for every tool that does not set its own. */
  timeoutMs?: number;
  maxOutputBytes?: number;
}

/** Wrong use of the command line; the message says what and how to fix it. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const USAGE = `Usage: twylt-mcp [options] -- COMMAND [ARG...] [-- COMMAND [ARG...]]...
       twylt-mcp --config tools.json [options] [-- COMMAND [ARG...]]...

Serve TWYLT executables as MCP tools over stdio. Each "--" starts one tool's command,
which runs directly (no shell). Tools from config files and from the command line are
served together; two tools must not share a name.

Options:
  --config FILE            tools from a JSON file: {"tools": [{"command": [...], "cwd"?,
                           "env"?, "timeoutMs"?, "maxOutputBytes"?, "name"?,
                           "transport"?}]}; repeatable
  --timeout MS             default time-out of each call and of the start-up describe
                           (default 30000)
  --max-output-bytes N     default limit of a tool's stdout and of its stderr
                           (default 4194304)
  -h, --help               show this help
  --version                show the version

Example:
  twylt-mcp -- python3 tools/echo/tool.py -- node build/examples/echo/tool.js
`;

export function parseCli(argv: readonly string[]): CliPlan {
  let split;
  let values;
  try {
    split = splitArgv(argv);
    ({ values } = parseArgs({
      args: split.options,
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: 'string', multiple: true },
        timeout: { type: 'string' },
        'max-output-bytes': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
    }));
  } catch (error) {
    const message = (error as Error).message;
    // A command without its "--" is the likeliest mistake; say so.
    throw new UsageError(/positional/i.test(message) ? `${message}; put "--" before each tool's command` : message);
  }
  const plan: CliPlan = {
    help: values.help ?? false,
    version: values.version ?? false,
    configs: values.config ?? [],
    commands: split.commands,
    timeoutMs: positiveInteger('--timeout', values.timeout),
    maxOutputBytes: positiveInteger('--max-output-bytes', values['max-output-bytes']),
  };
  if (!plan.help && !plan.version && plan.configs.length === 0 && plan.commands.length === 0) {
    throw new UsageError('no tools given: put "-- COMMAND..." after the options, or use --config FILE');
  }
  return plan;
}

function positiveInteger(option: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value <= 0) {
    throw new UsageError(`${option} needs a positive whole number, got ${JSON.stringify(text)}`);
  }
  return value;
}
