/** `twylt call`: run a tool on one input; print its output, or its failure readably. */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { text } from 'node:stream/consumers';
import { TRANSPORTS, TwyltClient, TwyltClientError, ToolError, UnexpectedExitError, parseJson, resolveCommand, type Transport } from '../../client/index.js';
import { formatJson } from '../../protocol/render.js';
import { CLI_EXIT, HELP_OPTION, UsageError, wrappingCommand, type Io } from '../command.js';
import { interruptible } from '../interrupt.js';
import { renderFailure } from '../render.js';
import { styleFor } from '../style.js';
import { DEFAULT_TIMEOUT_MS } from '../../client/process.js';
import { formatOptions, type OptionSpec } from '../../toolset/option-spec.js';
import { SANDBOX_OPTIONS, openSandbox } from '../../toolset/sandbox/flags.js';
import { parseTimeout } from './describe.js';

/** `twylt call`'s own flags, in help order; the sandbox's and --help follow. */
const CALL_OPTIONS = {
  input: { type: 'string', value: 'JSON', help: 'the input object' },
  'input-file': { type: 'string', value: 'F', help: 'read the input object from file F' },
  transport: {
    type: 'string',
    value: 'T',
    help: 'how the tool gets it: cli (default, last argument), stdin, or file (input.json/output.json in a fresh .twylt-call-* directory made inside the current one, so npx or node --import tsx find this project; removed afterwards)',
  },
  // The client's own default: the call sets none.
  timeout: { type: 'string', value: 'MS', help: 'kill the tool (and all it started) after MS ms', byDefault: DEFAULT_TIMEOUT_MS },
  validate: { type: 'boolean', help: "check input and output against the tool's published schemas" },
  json: { type: 'boolean', help: 'print the output compactly and failures as the raw error JSON' },
} as const satisfies Record<string, OptionSpec>;

/** Where the help's option texts start; the own flags' texts wrap a little narrower. */
const COLUMN = 22;

const HELP = `twylt call: run a tool on one input and print its output

Usage:
  twylt call [--input JSON | --input-file F] [--transport cli|stdin|file]
             [--timeout MS] [--validate] [--json] [--sandbox...] -- <tool command...>

The input is a JSON object from --input, from --input-file, or else from stdin.

Options:
${formatOptions(CALL_OPTIONS, { column: COLUMN, width: 86 })}${formatOptions({ ...SANDBOX_OPTIONS, help: HELP_OPTION }, { column: COLUMN })}
Exit code: the tool's own (0, 2 to 6 as TWYLT defines them, or any other code it
exited with); 1 when the tool could not run or misbehaved (time-out, crash, output
that is not JSON) or --validate found a mismatch; 64 for wrong usage; 130, 143 or 129
when interrupted by SIGINT (Ctrl-C), SIGTERM or SIGHUP, after killing the tool and
removing the exchange directory.

Example:
  twylt call --input '{"text": "hi"}' -- python3 tool.py
`;

export const command = wrappingCommand({
  name: 'call',
  help: HELP,
  options: { ...CALL_OPTIONS, ...SANDBOX_OPTIONS },
  async run(values, tool, io) {
    const transport = (values.transport ?? 'cli') as Transport;
    if (!TRANSPORTS.includes(transport)) throw new UsageError(`--transport must be one of ${TRANSPORTS.join(', ')}; got "${values.transport}"`);
    // Every flag is checked before the input is read (stdin, maybe).
    const timeoutMs = parseTimeout(values.timeout);
    const input = await readInput(values.input, values['input-file'], io);
    const sandbox = await openSandbox(values, io.cwd);
    const client = new TwyltClient(resolveCommand(tool, io.cwd), {
      cwd: io.cwd,
      timeoutMs,
      sandbox: sandbox?.forTool({ workspace: io.cwd }),
    });
    try {
      // Numbers as the tool wrote them, to the digit: `text` fidelity, written back by JSON.stringify.
      const { output } = await interruptible((signal) => client.call(input, { transport, validate: values.validate, numbers: 'text', signal }));
      io.stdout.write(`${values.json ? JSON.stringify(output) : formatJson(output)}\n`);
      return CLI_EXIT.ok;
    } catch (error) {
      if (!(error instanceof TwyltClientError)) throw error;
      if (values.json) io.stderr.write(rawFailure(error));
      else io.stderr.write(renderFailure(error, styleFor(io.stderr, io.env)));
      return error instanceof ToolError || error instanceof UnexpectedExitError ? error.exitCode : CLI_EXIT.failed;
    } finally {
      await sandbox?.close();
    }
  },
});

async function readInput(inline: string | undefined, file: string | undefined, io: Io): Promise<Record<string, unknown>> {
  if (inline !== undefined && file !== undefined) throw new UsageError('give --input or --input-file, not both');
  let source: string;
  let where: string;
  if (inline !== undefined) [source, where] = [inline, '--input'];
  else if (file !== undefined) {
    where = file;
    source = await readFile(resolve(io.cwd, file), 'utf8').catch((error: Error) => {
      throw new UsageError(`cannot read --input-file ${file}: ${error.message}`);
    });
  } else {
    if (io.stdin.isTTY) throw new UsageError('no input: give --input JSON, --input-file F, or pipe the JSON to stdin');
    [source, where] = [await text(io.stdin), 'stdin'];
  }
  let value: unknown;
  try {
    // The tool gets the numbers as typed: an id beyond 2^53 must not reach it rounded.
    value = parseJson(source, 'text');
  } catch (error) {
    throw new UsageError(`the input from ${where} is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`the input from ${where} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** The tool's own stderr when it held an error object; otherwise a client error as one JSON line. */
function rawFailure(error: TwyltClientError): string {
  if (error instanceof ToolError && error.error) return error.stderr.endsWith('\n') ? error.stderr : `${error.stderr}\n`;
  return `${JSON.stringify({ client_error: { name: error.name, message: error.message, stderr: error.stderr } })}\n`;
}
