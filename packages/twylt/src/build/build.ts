/**
 * `twylt build`: one tool file (TypeScript or JavaScript) bundled with everything it imports
 * into one ESM file that runs with plain node and no node_modules. The tool's json_spec is
 * computed at build time, by running a first bundle once, and embedded in the final one, so
 * describe never loads schema code. esbuild does the bundling; it is loaded only here.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import type { JsonSpec } from '../tool/hooks.js';

export interface BuildOptions {
  /** The tool's source file: it runs the tool when evaluated (`MyTool.run()`). */
  entry: string;
  /** The single file to write (ESM; `.mjs` keeps it ESM wherever it is put). */
  outfile: string;
  /** Minify the output (default true): smaller files start faster. */
  minify?: boolean;
}

export interface BuildResult {
  outfile: string;
  bytes: number;
  spec: JsonSpec;
}

/** A build that cannot succeed; the message says why. */
export class BuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BuildError';
  }
}

/** The module every built file starts with (see entry.ts), beside this one in dist/ or src/. */
const ENTRY_RUNTIME = fileURLToPath(new URL(`./entry${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));

export async function buildTool(options: BuildOptions): Promise<BuildResult> {
  const entry = resolve(options.entry);
  const outfile = resolve(options.outfile);
  const esbuild = await loadEsbuild();
  const bundle = async (spec: JsonSpec | undefined, minify: boolean): Promise<Uint8Array> => {
    try {
      const result = await esbuild.build({
        stdin: { contents: entrySource(entry, spec), resolveDir: dirname(entry), sourcefile: 'twylt-build-entry.js', loader: 'js' },
        bundle: true,
        packages: 'bundle',
        platform: 'node',
        format: 'esm',
        target: 'node20',
        minify,
        // Names are observable: a thrown object's class name becomes `exception.type`.
        keepNames: true,
        // Bundled CommonJS code may require node's own modules; ESM has no `require` of its own.
        banner: { js: "#!/usr/bin/env node\nimport { createRequire as __twyltCreateRequire } from 'node:module';\nconst require = __twyltCreateRequire(import.meta.url);" },
        plugins: [lazyBuiltins],
        write: false,
        outfile,
        logLevel: 'silent',
      });
      return result.outputFiles[0]!.contents;
    } catch (error) {
      const messages = (error as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors;
      const detail = messages?.map((m) => (m.location ? `${m.location.file}:${m.location.line}: ${m.text}` : m.text)).join('\n');
      throw new BuildError(`Cannot bundle ${entry}:\n${detail ?? (error as Error).message}`);
    }
  };

  // The probe stays readable: its stack trace is what the author sees if the tool fails to load.
  const spec = await askSpec(entry, await bundle(undefined, false));
  const code = await bundle(spec, options.minify ?? true);
  await writeWhole(outfile, code);
  return { outfile, bytes: code.length, spec };
}

/** The generated entry module: the built-file runtime, then the tool, imported lazily. */
function entrySource(entry: string, spec: JsonSpec | undefined): string {
  return [
    `import { runBuilt } from ${JSON.stringify(ENTRY_RUNTIME)};`,
    `runBuilt(${spec === undefined ? 'undefined' : JSON.stringify(spec)}, () => import(${JSON.stringify(entry)}));`,
  ].join('\n');
}

const BUILTIN = new RegExp(`^(node:.+|${builtinModules.map((name) => name.replace(/[/]/g, '\\/')).join('|')})$`);
const NAMESPACE = 'twylt-builtin';

/**
 * Node's own modules load when the code that uses them first runs, as in the unbuilt tool:
 * an ES import of a builtin would be hoisted to the top of the single file and load at
 * start-up even for code that never runs (node:crypto alone costs several ms).
 */
const lazyBuiltins: Plugin = {
  name: 'twylt-lazy-builtins',
  setup(build) {
    build.onResolve({ filter: BUILTIN }, (args) =>
      args.namespace === NAMESPACE ? { path: args.path, external: true } : { path: args.path, namespace: NAMESPACE },
    );
    // A CommonJS stand-in: esbuild then reads its properties where they are used.
    build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

async function loadEsbuild(): Promise<typeof import('esbuild')> {
  try {
    return await import('esbuild');
  } catch (error) {
    throw new BuildError(`twylt build needs esbuild, which cannot be loaded: ${(error as Error).message}`);
  }
}

/**
 * Runs the first bundle once for `describe json_spec`. It runs beside the source, so that
 * everything the answer depends on (the nearest package.json for default requirements) is
 * what the unbuilt tool sees.
 */
async function askSpec(entry: string, code: Uint8Array): Promise<JsonSpec> {
  const probe = join(dirname(entry), `.${basename(entry)}.twylt-build-${process.pid}.mjs`);
  await writeFile(probe, code);
  try {
    const { code: exit, stdout, stderr } = await runNode(probe, ['{"describe": "json_spec"}']);
    if (exit !== 0) throw new BuildError(`${entry} did not describe itself (exit ${exit}):\n${(stderr.trim() || stdout.trim()).slice(-4000)}`);
    try {
      return JSON.parse(stdout) as JsonSpec;
    } catch {
      throw new BuildError(`${entry} printed no json_spec: ${stdout.slice(0, 200)}`);
    }
  } finally {
    await rm(probe, { force: true });
  }
}

function runNode(file: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  // The probe must describe the tool as a consumer would see it by default.
  for (const key of Object.keys(env)) if (key === 'INPUT_DESCRIBE' || key === 'NODE_OPTIONS' || /^(TWYLT|TOOLSPEC)_/.test(key)) delete env[key];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [file, ...args], { cwd: dirname(file), env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

/** The output appears whole or not at all, executable like any tool; its folder is created. */
async function writeWhole(outfile: string, code: Uint8Array): Promise<void> {
  const temporary = `${outfile}.${process.pid}.tmp`;
  try {
    await mkdir(dirname(outfile), { recursive: true });
    await writeFile(temporary, code);
    await chmod(temporary, 0o755);
    await rename(temporary, outfile);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new BuildError(`Cannot write ${outfile}: ${(error as Error).message}`);
  }
}
