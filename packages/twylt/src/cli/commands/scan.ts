/** `twylt scan`: find the TWYLT tools of folders, describe them, and write a catalog. */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import { ConfigError } from '../../toolset/config.js';
import { ENVS_DIR_ENV, defaultEnvsDir } from '../../toolset/catalog/install.js';
import { commandPath } from '../../toolset/catalog/outside.js';
import { WORKSPACES_DIR_ENV, defaultWorkspacesDir } from '../../toolset/catalog/workspaces.js';
import { namesKept, writeCatalog } from '../../toolset/catalog/catalog.js';
import { scanTools, type ScannedTool } from '../../toolset/catalog/scan.js';
import { CLI_EXIT, HELP_OPTION, UsageError, parseOptions, type Command } from '../command.js';
import { interruptible } from '../interrupt.js';
import { progressFor, scanProgress } from '../progress.js';
import { SANDBOX_OPTIONS, openSandbox } from '../../toolset/sandbox/flags.js';
import { formatOptions, parseCount, type OptionSpec } from '../../toolset/option-spec.js';
import { BUILT_IN_DEFAULTS } from '../../toolset/policy.js';
import { parseTimeout } from './describe.js';

/** `twylt scan`'s own flags, in help order; the sandbox's and --help follow. */
const SCAN_OPTIONS = {
  json: {
    type: 'boolean',
    help: 'the report as JSON: {"tools": [{"name", "status", "command", "cwd", "category", "reason", "requirements", ...}]}',
  },
  write: {
    type: 'string',
    value: 'FILE',
    help: 'write the ok tools as a catalog: the tool-set config that twylt-mcp --config and twylt inspect --config read, with each tool\'s category, entry file, environment and describe cache; a "name" given in FILE by hand is kept by the next scan',
  },
  install: {
    type: 'boolean',
    help: "install the requirements of needs_install tools (pip --target, npm --prefix) into an environment cache keyed by their content, then describe them again; without it nothing is installed and the report shows the command that would run. Requirements are data: a line or name an installer would read as an option is refused on its tool's row. npm runs no install scripts (--ignore-scripts); pip may still run the build code of a package that ships no wheel. pip runs on the interpreter --python names, resolved to its executable (a pyenv shim is looked through), isolated (-I), in its staging folder. With --sandbox each install runs sandboxed too: it writes only its staging folder, reads the pack and the local indexes pip's configuration names, and reaches only the registries pip's and npm's configuration names",
  },
  'allow-install-scripts': { type: 'boolean', help: 'let npm run the preinstall/install/postinstall scripts of the packages it installs' },
  glob: { type: 'string', multiple: true, value: 'G', help: 'also run files matching G (relative to DIR; * ? **); repeatable' },
  exclude: { type: 'string', multiple: true, value: 'G', help: 'never look at paths matching G (relative to DIR); repeatable' },
  // A found tool sets no time-out of its own yet: TWYLT's default call time-out.
  timeout: { type: 'string', value: 'MS', help: 'time-out of each describe', byDefault: BUILT_IN_DEFAULTS.timeoutMs },
  jobs: { type: 'string', value: 'N', help: 'describes at once (default: the number of CPUs)' },
  prefix: { type: 'string', multiple: true, value: 'DIR=P', help: 'serve the tools found under DIR as P + their name; repeatable' },
  envs: { type: 'string', value: 'DIR', help: `the environment cache (default $${ENVS_DIR_ENV}, else \${XDG_CACHE_HOME:-~/.cache}/twylt/envs)` },
  workspaces: {
    type: 'string',
    value: 'DIR',
    help: `where the tools run, each in DIR/<folder>-<hash of its path>, made when it is first described; the catalog names it (default $${WORKSPACES_DIR_ENV}, else \${XDG_STATE_HOME:-~/.local/state}/twylt/workspaces)`,
  },
  python: { type: 'string', value: 'CMD', help: 'the interpreter of Python tools (default python3)' },
  node: {
    type: 'string',
    value: 'CMD',
    help: 'the Node of JavaScript and TypeScript tools (default node); the catalog names the runtime as given here, so it keeps working after an upgrade or on another machine',
  },
} as const satisfies Record<string, OptionSpec>;

const HELP = `twylt scan: find the TWYLT tools in folders and write a catalog to serve

Usage:
  twylt scan DIR... [--json] [--write FILE] [--install] [--glob G]... [--exclude G]...
                    [--timeout MS] [--jobs N] [--prefix DIR=PREFIX]... [--envs DIR]
                    [--workspaces DIR] [--python CMD] [--node CMD] [--allow-install-scripts]
                    [--sandbox...]

A scan EXECUTES CODE FROM THE FOLDERS: every entry point it finds is started to describe
itself. Scan only folders whose code you would run.

Entry points: the tools a pack's manifest.json lists ({"name", "version", "protocol",
"tools": [{"name", "entrypoint", "bootstrap"?, "description"?}]}: the bootstrap launcher
when it exists, else the entry point; a listed path is also taken; nothing whose real
path leaves the pack); elsewhere, in each folder, a run.py launcher beside a tool.py, or
else the first of tool.py, tool.ts, tool.mts, tool.js, tool.mjs; and files that --glob
names. Hidden folders, node_modules, __pycache__ and test folders are never entered
unless a --glob names them; nothing else is ever run.

Each tool runs in a workspace of its own (--workspaces), by the absolute path of its entry
file: its code's folder is never where it runs, and stays read-only with --sandbox.

Each tool is reported as ok, needs_install (it describes with empty schemas and declares
requirements, or its pack has a requirements.txt: its dependencies are missing; or it
describes, but a requirement it declares is not installed where it runs: a pip one for its
interpreter, asked isolated with python -I; an npm one in a node_modules folder from its
folder up, in the declared semver range; NODE_PATH and PYTHONPATH do not count) or failed,
with its category (the pack, then its subfolders) and one line why. Two tools with one
name both fail, naming both files. --install installs, for each needs_install tool, every
requirement it declares (a Python tool of a pack with a requirements.txt: that file),
nothing else; twylt's own packages are linked, never fetched.

Options:
${formatOptions({ ...SCAN_OPTIONS, ...SANDBOX_OPTIONS, help: HELP_OPTION }, { column: 21 })}
Exit codes: 0 every tool found is ok; 1 some are not, or none was found (the ok ones are
still written); 64 wrong usage.

Example:
  twylt scan packs --install --write catalog.json && twylt-mcp --config catalog.json
`;

export const command: Command = {
  name: 'scan',
  help: HELP,
  async run(args, io) {
    const { values, positionals } = parseOptions({
      args,
      strict: true,
      allowPositionals: true,
      options: { ...SCAN_OPTIONS, ...SANDBOX_OPTIONS, help: HELP_OPTION },
    });
    if (values.help) {
      io.stdout.write(HELP);
      return CLI_EXIT.ok;
    }
    if (positionals.length === 0) throw new UsageError('no folder given: twylt scan DIR...');
    const dirs = positionals.map((dir) => resolve(io.cwd, dir));
    for (const [at, dir] of dirs.entries()) {
      if (!(await isFolder(dir))) throw new UsageError(`"${positionals[at]}" is not a folder`);
    }
    const write = values.write === undefined ? undefined : resolve(io.cwd, values.write);
    let names: Map<string, string> | undefined;
    try {
      names = write ? await namesKept(write) : undefined;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      io.stderr.write(`twylt scan: ${error.message}\n(--write keeps the names given in it: fix it or remove it)\n`);
      return CLI_EXIT.failed;
    }
    const options = {
      globs: values.glob,
      excludes: values.exclude,
      timeoutMs: parseTimeout(values.timeout) ?? BUILT_IN_DEFAULTS.timeoutMs,
      jobs: parseJobs(values.jobs),
      install: values.install ?? false,
      allowInstallScripts: values['allow-install-scripts'] ?? false,
      envsDir: values.envs === undefined ? defaultEnvsDir(io.env) : resolve(io.cwd, values.envs),
      workspacesDir: values.workspaces === undefined ? defaultWorkspacesDir(io.env) : resolve(io.cwd, values.workspaces),
      // A relative path holds from the tool's workspace too.
      python: values.python === undefined ? undefined : commandPath(values.python, io.cwd),
      node: values.node === undefined ? undefined : commandPath(values.node, io.cwd),
      prefixes: (values.prefix ?? []).map((text) => parsePrefix(text, io.cwd)),
      names,
    };
    // Describes run sandboxed when asked: a scan runs code from the folders it scans.
    const sandbox = await openSandbox(values, io.cwd);
    const progress = progressFor(io, 'scan', values.json);
    const tools = await interruptible((signal) => scanTools(dirs, { ...options, signal, sandbox, onProgress: scanProgress(progress) }))
      .finally(progress.end)
      .finally(() => sandbox?.close());
    io.stdout.write(values.json ? `${JSON.stringify({ tools: tools.map(reportRow) }, null, 2)}\n` : table(tools));
    const usable = tools.filter((tool) => tool.status === 'ok').length;
    if (tools.length === 0) io.stderr.write(`twylt scan: no TWYLT tools found under ${positionals.join(', ')}\n`);
    if (write) {
      if (usable > 0) {
        await writeCatalog(tools, write);
        io.stderr.write(`twylt scan: wrote ${usable} tool${usable === 1 ? '' : 's'} to ${values.write}\n`);
      } else io.stderr.write(`twylt scan: no ok tool, ${values.write} not written\n`);
    }
    return tools.length > 0 && usable === tools.length ? CLI_EXIT.ok : CLI_EXIT.failed;
  },
};

/** A row of the JSON report. */
function reportRow(tool: ScannedTool) {
  const { name, version, description, status, command, cwd, category, reason, requirements, source, env, pack } = tool;
  return { name, version, description, status, command, cwd, category, reason, requirements, source, ...(env ? { env } : {}), ...(pack ? { pack } : {}) };
}

/** The report for people: one line per tool, then the totals. */
function table(tools: readonly ScannedTool[]): string {
  const rows = [['NAME', 'VERSION', 'CATEGORY', 'STATUS', 'WHY'], ...tools.map((tool) => [tool.name ?? `(${tool.source})`, tool.version ?? '-', tool.category, tool.status, tool.reason || '-'])];
  const widths = [0, 1, 2, 3].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = rows.map((row) => row.map((cell, column) => (column < 4 ? cell.padEnd(widths[column]!) : cell)).join('  ').trimEnd());
  const count = (status: string) => tools.filter((tool) => tool.status === status).length;
  lines.push('', `${tools.length} tools: ${count('ok')} ok, ${count('needs_install')} need install, ${count('failed')} failed`);
  return `${lines.join('\n')}\n`;
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

function parseJobs(text: string | undefined): number {
  if (text === undefined) return availableParallelism();
  return parseCount('--jobs', text, 1, 1024);
}

function parsePrefix(text: string, cwd: string): { dir: string; prefix: string } {
  const at = text.lastIndexOf('=');
  if (at <= 0 || at === text.length - 1) throw new UsageError(`--prefix takes DIR=PREFIX, such as packs/git=git_; got "${text}"`);
  return { dir: resolve(cwd, text.slice(0, at)), prefix: text.slice(at + 1) };
}
