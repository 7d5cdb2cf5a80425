/** `twylt build`: bundle a tool into one self-contained ESM file, or one executable (see ../../build/). */
import { isAbsolute, relative, resolve } from 'node:path';
import { EXECUTABLE_RUNTIMES, type ExecutableRuntime } from '../../build/compile.js';
import { formatOptions, type OptionSpec } from '../../toolset/option-spec.js';
import { CLI_EXIT, HELP_OPTION, UsageError, parseOptions, type Command } from '../command.js';
import { progressFor } from '../progress.js';

const isExecutableRuntime = (name: string): name is ExecutableRuntime => (EXECUTABLE_RUNTIMES as readonly string[]).includes(name);

/** `twylt build`'s flags, in help order. */
const BUILD_OPTIONS = {
  outfile: { type: 'string', short: 'o', value: 'FILE', help: 'the file to write (required; .mjs keeps it an ES module anywhere)' },
  executable: { type: 'boolean', help: 'write a single executable (see above)' },
  runtime: { type: 'string', value: 'NAME', help: "the executable's runtime: node (default), bun or deno" },
  'snapshot-blob': { type: 'boolean', help: 'write a startup snapshot for node --snapshot-blob (see above)' },
  'no-minify': { type: 'boolean', help: 'keep the bundled code readable' },
  help: HELP_OPTION,
} as const satisfies Record<string, OptionSpec>;

const HELP = `twylt build: bundle a tool into one file that runs with plain node, or into one executable

Usage:
  twylt build <tool.ts|tool.js> -o <out.mjs> [--no-minify]
  twylt build <tool.ts|tool.js> --executable [--runtime node|bun|deno] -o <out> [--no-minify]
  twylt build <tool.ts|tool.js> --snapshot-blob -o <out.blob> [--no-minify]

The tool file and everything it imports (its schema library, twylt itself) become one ES
module that needs no node_modules: copy it anywhere and run "node out.mjs". Its json_spec
is computed now and embedded, so describe answers without loading any schema code.

--executable writes one binary that needs neither Node nor node_modules: a copy of the
Node running this build (about 100 MB) with the tool's module already evaluated into a V8
startup snapshot, so a call starts about as fast as Node itself (Node's single executable
applications). The tool's module runs once, now: what it computes at its top level is
fixed in the binary, and a module that leaves a timer, a server, a pending read or an open
file behind, loads a native addon, or needs an ES module (top-level await) fails the build
with the reason. It needs postject beside esbuild, and the build run by Node 20.12 or
later (22, 24, 26; not Bun or Deno).
Linux only for now. macOS also needs the copy's signature removed before injection and a
new one after (codesign --remove-signature, then codesign --sign -) and postject's
--macho-segment-name NODE_SEA; Windows needs an .exe name and may sign it (signtool).
The binary runs only where that Node would: same OS and CPU architecture.

--runtime bun or --runtime deno makes the executable with that runtime instead, from the
same bundle: "bun build --compile" (with bytecode; no .env or bunfig.toml of the caller's
folder is loaded) or "deno compile -A" (which needs Deno's runtime binary, denort: it
downloads it, or takes DENORT_BIN). The tool's module runs at every start, as from its
source. bun and deno are optional peers too, found in node_modules/.bin or on PATH:
npm install --save-dev bun (or deno). Every executable, whatever its runtime, must start
and describe the tool exactly as the build did before it is written.

--snapshot-blob writes the same snapshot alone, for tools that share one installed Node:
run it with "node --snapshot-blob out.blob -- [args]", with the Node that built it (the
"--" keeps Node from taking -v or --help for its own).

esbuild (and postject for --executable) are optional peer dependencies of twylt, needed
only here: npm install --save-dev esbuild postject

Options:
${formatOptions(BUILD_OPTIONS, { column: 22 })}
Examples:
  twylt build tools/echo.ts -o dist/echo.mjs
  twylt build tools/echo.ts --executable -o dist/echo && dist/echo '{"text": "hi"}'
  twylt build tools/echo.ts --executable --runtime bun -o dist/echo-bun
`;

export const command: Command = {
  name: 'build',
  help: HELP,
  async run(args, io) {
    const { values, positionals } = parseOptions({
      args,
      strict: true,
      allowPositionals: true,
      options: BUILD_OPTIONS,
    });
    if (values.help) {
      io.stdout.write(HELP);
      return CLI_EXIT.ok;
    }
    if (positionals.length !== 1) throw new UsageError(`give exactly one tool file, got ${positionals.length}`);
    if (!values.outfile) throw new UsageError('give the output file with -o, e.g. -o dist/tool.mjs');
    const entry = resolve(io.cwd, positionals[0]!);
    const outfile = resolve(io.cwd, values.outfile);
    if (values.executable && values['snapshot-blob']) throw new UsageError('give --executable or --snapshot-blob, not both');
    const kind = values.executable ? 'executable' : values['snapshot-blob'] ? 'snapshot-blob' : 'module';
    const runtime = values.runtime ?? 'node';
    if (!isExecutableRuntime(runtime)) throw new UsageError(`--runtime is node, bun or deno, not "${runtime}"`);
    if (runtime !== 'node' && kind !== 'executable') throw new UsageError(`--runtime ${runtime} makes an executable: add --executable`);
    const { buildTool } = await import('../../build/index.js');
    const started = performance.now();
    const progress = progressFor(io, 'build', false);
    const result = await buildTool({ entry, outfile, minify: !values['no-minify'], kind, runtime, onStep: progress.show }).finally(progress.end);
    const near = relative(io.cwd, result.outfile);
    const size = kind === 'module' ? `${(result.bytes / 1024).toFixed(0)} KiB` : `${(result.bytes / 2 ** 20).toFixed(1)} MiB ${kind === 'executable' ? `${runtime === 'node' ? '' : `${runtime} `}executable` : 'snapshot'}, ${((performance.now() - started) / 1000).toFixed(1)} s`;
    io.stderr.write(`twylt build: wrote ${near.startsWith('..') || isAbsolute(near) ? result.outfile : near} (${size}, ${result.spec.name} ${result.spec.version})\n`);
    return CLI_EXIT.ok;
  },
};
