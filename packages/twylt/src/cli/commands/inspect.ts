/** `twylt inspect`: a local web page to try TWYLT tools in the browser. */
import { resolve } from 'node:path';
import { isLoopback } from '../../server/access.js';
import { DEFAULT_HOST } from '../../server/listen.js';
import { splitArgv } from '../../toolset/args.js';
import { assembleToolset } from '../../toolset/catalog/assemble.js';
import { ConfigError } from '../../toolset/config.js';
import { ToolsetError, describeToolset, type DescribedTool } from '../../toolset/describe.js';
import { defaultWorkspacesDir } from '../../toolset/catalog/workspaces.js';
import { commandPath } from '../../toolset/catalog/outside.js';
import { CLI_EXIT, HELP_OPTION, UsageError, parseOptions, type Command } from '../command.js';
import { INTERRUPT_SIGNALS, interruptible } from '../interrupt.js';
import { formatOptions, parseCount, type OptionSpec } from '../../toolset/option-spec.js';
import { TOOLSET_OPTIONS, metricsAddress, toolsetOptions } from '../../toolset/options.js';
import { sandboxFromFlags } from '../../toolset/sandbox/flags.js';

/** The port 0 asks the system for: any free one. */
const ANY_PORT = 0;

/** `twylt inspect`'s own flags beside the toolset's (TOOLSET_OPTIONS). */
const INSPECT_OPTIONS = {
  port: { type: 'string', value: 'N', help: 'the port to listen on', byDefault: `${ANY_PORT}: any free port` },
  host: {
    type: 'string',
    value: 'H',
    help: `the address to listen on (default ${DEFAULT_HOST}, this machine only; 0.0.0.0 serves every network, still only with the token)`,
  },
  'no-open': { type: 'boolean', help: 'do not open the page in a browser' },
  help: HELP_OPTION,
} as const satisfies Record<string, OptionSpec>;

/** Where the help's option texts start, and its width. */
const LAYOUT = { column: 18, width: 90 };

const HELP = `twylt inspect: try TWYLT tools in the browser

Usage:
  twylt inspect [--config tools.json]... [--scan DIR]... [--port N] [--host H]
                [--timeout MS] [--describe-timeout MS] [--strict] [--warm N] [--max-warm N]
                [--metrics [HOST:]PORT] [--sandbox [--sandbox-*]...] [--no-open] [-- <tool command...> [-- <tool command...>]...]

Describes every tool, then serves a local page that lists them, builds a form from each
input schema (or edit the input as JSON), calls the tool over the transport you pick and
shows exactly what came back: the output, or the error with each issue next to its field,
the exit code, stage, stderr and duration. The calls of the session are kept in a history,
each one re-runnable.

The page's link, with its per-run token, is printed on stderr:
  twylt inspect: http://127.0.0.1:PORT/#token=...
The page keeps the token in its tab and sends it as a header, never in a cookie (other
servers on this machine get no credential). Only requests with that token, for the
server's own Host and from its own page (Origin) are served; the page runs only the tools
given here, never a command it is sent.

Options:
${formatOptions(TOOLSET_OPTIONS, LAYOUT)}${formatOptions(INSPECT_OPTIONS, LAYOUT)}
Each "--" starts one tool's command, run as an argument list, never through a shell.
Stop the server with Ctrl-C.

Example:
  twylt inspect -- python3 tool.py -- node build/examples/probe/tool.js
  twylt inspect --config tools.json --port 8765 --no-open
  twylt inspect --scan packs
`;

export const command: Command = {
  name: 'inspect',
  help: HELP,
  async run(args, io) {
    const split = splitArgv(args);
    const { values } = parseOptions({
      args: split.options,
      strict: true,
      allowPositionals: false,
      options: { ...TOOLSET_OPTIONS, ...INSPECT_OPTIONS },
    });
    if (values.help) {
      io.stdout.write(HELP);
      return CLI_EXIT.ok;
    }
    const configs = values.config ?? [];
    const scans = values.scan ?? [];
    if (configs.length === 0 && scans.length === 0 && split.commands.length === 0) {
      throw new UsageError('no tools given: put "-- <tool command...>" after the options, or use --config FILE or --scan DIR');
    }
    const port = parsePort(values.port);
    const host = values.host ?? DEFAULT_HOST;
    if (host === '') throw new UsageError('--host needs an address, such as 127.0.0.1');
    const flagDefaults = toolsetOptions(values);
    const metrics = metricsAddress(values.metrics as string | undefined);
    const say = (line: string) => io.stderr.write(`twylt inspect: ${line}\n`);
    // What the page lists as left out: the scan's, for the whole run; the describes', until the next reload.
    const scanLeftOut: string[] = [];
    let describeLeftOut: string[] = [];
    const onUndescribed = values.strict
      ? undefined
      : (problem: string) => {
          describeLeftOut.push(`${problem} (described again at the next reload)`);
          say(`left out, described again at the next reload: ${problem}`);
        };

    let describe: (signal?: AbortSignal) => Promise<DescribedTool[]>;
    try {
      const assembled = await assembleToolset(
        {
          configs: configs.map((file) => resolve(io.cwd, file)),
          commands: split.commands,
          scans: scans.map((dir) => resolve(io.cwd, dir)),
          defaults: flagDefaults,
          sandbox: sandboxFromFlags(values, io.cwd),
          workspacesDir: values.workspaces === undefined ? defaultWorkspacesDir(io.env) : resolve(io.cwd, values.workspaces),
          envsDir: values.envs === undefined ? undefined : resolve(io.cwd, values.envs),
          python: values.python === undefined ? undefined : commandPath(values.python, io.cwd),
        },
        (line) => {
          scanLeftOut.push(line.replace(/^left out /, ''));
          say(`--scan: ${line}`);
        },
      );
      const { defaults } = assembled;
      const entries = assembled.entries.map((entry) => ({
        ...entry,
        cwd: entry.cwd ?? io.cwd,
      }));
      describe = async (signal) => {
        const before = describeLeftOut;
        describeLeftOut = [];
        try {
          return await describeToolset(entries, {
            // Each reload a set of its own, with its own warm cap: the set it replaces is closed after.
            defaults: { ...defaults },
            renameHint: 'with "name" in a --config file', signal, onUndescribed });
        } catch (error) {
          // A failed reload keeps the tools described before, and what was left out with them.
          describeLeftOut = before;
          throw error;
        }
      };
    } catch (error) {
      if (error instanceof ConfigError) {
        say(error.message);
        return CLI_EXIT.failed;
      }
      throw error;
    }
    // Loaded only when asked for (ADR 0033); it has no token to check, so loopback only.
    let observing: { close(): Promise<void> } | undefined;
    if (metrics) {
      const { startObserving } = await import('../../observe/index.js');
      try {
        const started = await startObserving({ serviceName: 'twylt-inspect', metrics, traces: null });
        observing = started;
        say(`metrics at ${started.metrics!.url}`);
      } catch (error) {
        say(`cannot start: ${(error as Error).message}`);
        return CLI_EXIT.failed;
      }
    }
    let tools: DescribedTool[];
    try {
      // A Ctrl-C while the tools describe themselves ends them too (they are out of its reach).
      tools = await interruptible(describe);
    } catch (error) {
      if (!(error instanceof ToolsetError)) throw error;
      say(`cannot start:\n${error.problems.map((problem) => `  ${problem}`).join('\n')}`);
      return CLI_EXIT.failed;
    }

    // Loaded only now: the server and its page are of no use to any other command.
    const [{ startInspector }, { openBrowser }] = await Promise.all([import('../../inspect/server.js'), import('../../inspect/browser.js')]);
    let inspector;
    try {
      inspector = await startInspector({ tools, reload: describe, leftOut: () => [...scanLeftOut, ...describeLeftOut], host, port, log: say });
    } catch (error) {
      say(`cannot listen on ${host}:${port}: ${(error as Error).message}`);
      return CLI_EXIT.failed;
    }
    // Listening for the signals before the link is out: whoever reads it may stop the server at once.
    // Closing kills the tools of calls in flight (their own process groups, out of a Ctrl-C's reach).
    const stopped = new Promise<NodeJS.Signals>((done) => {
      for (const signal of INTERRUPT_SIGNALS) process.once(signal, done);
    });
    say(`${tools.length} tool${tools.length === 1 ? '' : 's'}: ${tools.map((tool) => tool.name).join(', ')}`);
    if (!isLoopback(host)) say(`listening on ${host}: anyone who can reach it and has the link can run these tools`);
    say(inspector.url);
    if (!values['no-open']) openBrowser(inspector.url, say);

    const signal = await stopped;
    await inspector.close();
    await observing?.close();
    say(`stopped (${signal})`);
    return CLI_EXIT.ok;
  },
};

/** 0: any free port. */
function parsePort(text: string | undefined): number {
  return text === undefined ? ANY_PORT : parseCount('--port', text, 0, 65535);
}
