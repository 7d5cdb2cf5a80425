/** `twylt build`: bundle a tool into one self-contained ESM file, or one executable (see ../../build/). */
import { isAbsolute, relative, resolve } from 'node:path';
import { CLI_EXIT, UsageError, parseOptions, type Command } from '../command.js';

const HELP = `twylt build: bundle a tool into one file that runs with plain node, or into one executable

Usage:
  twylt build <tool.ts|tool.js> -o <out.mjs> [--no-minify]
  twylt build <tool.ts|tool.js> --executable -o <out> [--no-minify]
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
with the reason. It needs postject beside esbuild, and Node 20.12 or later.
Linux only for now. macOS also needs the copy's signature removed before injection and a
new one after (codesign --remove-signature, then codesign --sign -) and postject's
--macho-segment-name NODE_SEA; Windows needs an .exe name and may sign it (signtool).
The binary runs only where that Node would: same OS and CPU architecture.

--snapshot-blob writes the same snapshot alone, for tools that share one installed Node:
run it with "node --snapshot-blob out.blob -- [args]", with the Node that built it (the
"--" keeps Node from taking -v or --help for its own).

esbuild (and postject for --executable) are optional peer dependencies of twylt, needed
only here: npm install --save-dev esbuild postject

Options:
  -o, --outfile FILE  the file to write (required; .mjs keeps it an ES module anywhere)
  --executable        write a single executable (see above)
  --snapshot-blob     write a startup snapshot for node --snapshot-blob (see above)
  --no-minify         keep the bundled code readable
  -h, --help          show this help

Examples:
  twylt build tools/echo.ts -o dist/echo.mjs
  twylt build tools/echo.ts --executable -o dist/echo && dist/echo '{"text": "hi"}'
`;

export const command: Command = {
  name: 'build',
  help: HELP,
  async run(args, io) {
    const { values, positionals } = parseOptions({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        outfile: { type: 'string', short: 'o' },
        'no-minify': { type: 'boolean' },
        executable: { type: 'boolean' },
        'snapshot-blob': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
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
    const { buildTool } = await import('../../build/index.js');
    const started = performance.now();
    const result = await buildTool({ entry, outfile, minify: !values['no-minify'], kind });
    const near = relative(io.cwd, result.outfile);
    const size = kind === 'module' ? `${(result.bytes / 1024).toFixed(0)} KiB` : `${(result.bytes / 2 ** 20).toFixed(1)} MiB ${kind === 'executable' ? 'executable' : 'snapshot'}, ${((performance.now() - started) / 1000).toFixed(1)} s`;
    io.stderr.write(`twylt build: wrote ${near.startsWith('..') || isAbsolute(near) ? result.outfile : near} (${size}, ${result.spec.name} ${result.spec.version})\n`);
    return CLI_EXIT.ok;
  },
};
