/** `twylt build`: bundle a tool into one self-contained ESM file (see ../../build/). */
import { isAbsolute, relative, resolve } from 'node:path';
import { CLI_EXIT, UsageError, parseOptions, type Command } from '../command.js';

const HELP = `twylt build: bundle a tool into one file that runs with plain node

Usage:
  twylt build <tool.ts|tool.js> -o <out.mjs> [--no-minify]

The tool file and everything it imports (its schema library, twylt itself) become one ES
module that needs no node_modules: copy it anywhere and run "node out.mjs". Its json_spec
is computed now and embedded, so describe answers without loading any schema code.

Options:
  -o, --outfile FILE  the file to write (required; .mjs keeps it an ES module anywhere)
  --no-minify         keep the bundled code readable
  -h, --help          show this help

Example:
  twylt build tools/echo.ts -o dist/echo.mjs
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
