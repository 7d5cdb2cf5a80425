/**
 * `twylt build`: one tool file (TypeScript or JavaScript) bundled with everything it imports
 * into one ESM file that runs with plain node and no node_modules. The tool's json_spec is
 * computed at build time, by running a first bundle once, and embedded in the final one, so
 * describe never loads schema code; the tool itself is carried as a string with V8's code
 * cache (load.ts, ADR 0008). With `kind: 'executable'` (or 'snapshot-blob') the tool is
 * evaluated into a V8 startup snapshot instead, in one binary with Node (executable.ts,
 * ADR 0010), or compiled by Bun or Deno into one of their executables (compile.ts, ADR 0023).
 * esbuild, postject, bun and deno are optional peer dependencies, used only here.
 */
import { readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BuildOptions as EsbuildOptions, Plugin } from 'esbuild';
import { builtRequirementsSource } from '../requirements/default-requirements.js';
import { scriptCommand } from '../protocol/runtime.js';
import type { JsonSpec } from '../tool/hooks.js';
import { runQuiet } from './child.js';
import { BuildError } from './errors.js';
import { compiledProduct, type ExecutableRuntime, findRuntime, hostRuntime } from './compile.js';
import { checkPlatform, snapshotProduct, type SnapshotKind } from './executable.js';
import { codeCache, IMPORT_META, wrapBundle } from './load.js';
import { checkedProduct } from './product.js';

export interface BuildOptions {
  /** The tool's source file: it runs the tool when evaluated (`MyTool.run()`). */
  entry: string;
  /** The single file to write (ESM; `.mjs` keeps it ESM wherever it is put). */
  outfile: string;
  /** Minify the output (default true): smaller files start faster. */
  minify?: boolean;
  /**
   * What to write: one ES module (default), a single executable with the tool evaluated
   * into a startup snapshot, or that snapshot alone, for `node --snapshot-blob <file>`.
   */
  kind?: 'module' | SnapshotKind;
  /**
   * The runtime of an executable (default node): Node with the tool in a startup snapshot,
   * or the tool's bundle compiled by `bun build --compile` or `deno compile`.
   */
  runtime?: ExecutableRuntime;
  /** Told each step as it starts, in words ("building the startup snapshot"): `twylt build` shows them on a terminal. */
  onStep?: (step: string) => void;
}

export { BuildError };

export interface BuildResult {
  outfile: string;
  bytes: number;
  spec: JsonSpec;
}

/** The modules every built file starts with (see entry.ts, load.ts), beside this one in dist/ or src/. */
const sibling = (name: string) => fileURLToPath(new URL(`./${name}${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));
const ENTRY_RUNTIME = sibling('entry');
const LOADER = sibling('load');
const SNAPSHOT_RUNTIME = sibling('snapshot');

export async function buildTool(options: BuildOptions): Promise<BuildResult> {
  const entry = resolve(options.entry);
  const outfile = resolve(options.outfile);
  const minify = options.minify ?? true;
  const kind = options.kind ?? 'module';
  const runtime = options.runtime ?? 'node';
  if (runtime !== 'node' && kind !== 'executable') throw new BuildError(`--runtime ${runtime} makes an executable: add --executable`);
  if (kind !== 'module' && runtime === 'node') checkPlatform(kind);
  const { esbuild, postject, compiler } = await loadPeers(kind, runtime, dirname(entry));
  const step = options.onStep ?? (() => {});
  const bundle: Bundle = async (contents, settings) => {
    try {
      const result = await esbuild.build({
        stdin: { contents, resolveDir: dirname(entry), sourcefile: 'twylt-build-entry.js', loader: 'js' },
        bundle: true,
        packages: 'bundle',
        platform: 'node',
        target: 'node20',
        // Names are observable: a thrown object's class name becomes `exception.type`.
        keepNames: true,
        write: false,
        outfile,
        logLevel: 'silent',
        ...settings,
      });
      return { code: result.outputFiles[0]!.text, warnings: result.warnings.map((w) => w.text) };
    } catch (error) {
      const messages = (error as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors;
      const detail = messages?.map((m) => (m.location ? `${m.location.file}:${m.location.line}: ${m.text}` : m.text)).join('\n');
      throw new BuildError(`Cannot bundle ${entry}:\n${detail ?? (error as Error).message}`);
    }
  };
  const esm = (contents: string, minified: boolean, prelude = '') =>
    bundle(contents, { format: 'esm', minify: minified, banner: { js: `${ESM_BANNER}${prelude}` }, plugins: [lazyBuiltins, englishZod] });

  // The probe stays readable: its stack trace is what the author sees if the tool fails to load.
  // Its default requirements are read from the tool's own files, not from the probe bundle.
  step('bundling the tool to ask its describe');
  const probe = await esm(runBuiltSource(undefined, `() => import(${JSON.stringify(entry)})`), false, `\n${builtRequirementsSource({ entryFile: entry })}`);
  step('asking the tool its describe');
  const spec = await askSpec(entry, probe.code);
  if (runtime !== 'node' && compiler !== undefined) {
    // The tool as it is, bundled: it answers describe itself, so the self-check proves that
    // its module loads and describes itself under that runtime as it did here. Requirements
    // it derives from its files are the build's: inside the executable there are no files.
    step('bundling the tool');
    const { code } = await esm(`import ${JSON.stringify(entry)};`, minify, `\n${builtRequirementsSource({ requirements: spec.requirements })}`);
    await mkdir(dirname(outfile), { recursive: true });
    step(`compiling the ${runtime} executable`);
    const temporary = await checkedProduct(outfile, spec, `${runtime} executable`, compiledProduct(runtime, compiler, code), step);
    await publish(temporary, outfile, 0o755);
    return { outfile, bytes: (await stat(outfile)).size, spec };
  }
  step('bundling the tool');
  const tool = await toolBundle(entry, minify, bundle);
  if (kind !== 'module') {
    if (tool === undefined) {
      throw new BuildError(`${entry} needs an ES module (top-level await, or import.meta other than url, filename and dirname), and a startup snapshot evaluates CommonJS only: build it without --${kind}`);
    }
    const script = (await bundle(snapshotEntrySource(spec, tool, outfile), { format: 'cjs', minify })).code;
    await mkdir(dirname(outfile), { recursive: true });
    const what = kind === 'executable' ? 'executable' : 'snapshot';
    const temporary = await checkedProduct(outfile, spec, what, snapshotProduct(kind, script, postject, dirname(entry), step), step);
    await publish(temporary, outfile, kind === 'executable' ? 0o755 : 0o644);
    return { outfile, bytes: (await stat(outfile)).size, spec };
  }
  const code = tool === undefined
    ? (await esm(runBuiltSource(spec, `() => import(${JSON.stringify(entry)})`), minify)).code
    : (await esm(
      [
        `import { evaluateTool } from ${JSON.stringify(LOADER)};`,
        `const tool = ${JSON.stringify(tool)};`,
        // A code cache is V8's and belongs to the Node that makes it; Bun's is JavaScriptCore
        // bytecode (600 KiB for the echo tool) that Node would only reject.
        `const cache = ${hostRuntime() === undefined ? JSON.stringify(codeCache(tool)) : 'undefined'};`,
        runBuiltSource(spec, '() => evaluateTool(tool, cache, import.meta.url)'),
      ].join('\n'),
      minify,
    )).code;
  await writeWhole(outfile, code);
  return { outfile, bytes: Buffer.byteLength(code), spec };
}

/** esbuild run on a generated entry module, with the settings that differ between bundles. */
type Bundle = (contents: string, settings: Pick<EsbuildOptions, 'format' | 'minify' | 'banner' | 'define' | 'plugins'>) => Promise<{ code: string; warnings: string[] }>;

/** Bundled CommonJS code may require node's own modules; ESM has no `require` of its own. */
const ESM_BANNER = "#!/usr/bin/env node\nimport { createRequire as __twyltCreateRequire } from 'node:module';\nconst require = __twyltCreateRequire(import.meta.url);";

/**
 * The script a startup snapshot is built from (see snapshot.ts): the tool bundle is a
 * function it calls at once, with import.meta fixed to the file being written.
 */
function snapshotEntrySource(spec: JsonSpec, tool: string, outfile: string): string {
  const meta = { url: pathToFileURL(outfile).href, filename: outfile, dirname: dirname(outfile) };
  return [
    `import { snapshotTool } from ${JSON.stringify(SNAPSHOT_RUNTIME)};`,
    `snapshotTool(${JSON.stringify(spec)}, require, (require) => {`,
    '  const module = { exports: {} };',
    `  ${wrapBundle(tool)}.call(undefined, module.exports, require, module, ${JSON.stringify(meta.filename)}, ${JSON.stringify(meta.dirname)}, ${JSON.stringify(meta)});`,
    '});',
  ].join('\n');
}

/** The module every built file starts with (see entry.ts), then the tool, loaded by `loadTool`. */
function runBuiltSource(spec: JsonSpec | undefined, loadTool: string): string {
  return [
    `import { runBuilt } from ${JSON.stringify(ENTRY_RUNTIME)};`,
    `runBuilt(${spec === undefined ? 'undefined' : JSON.stringify(spec)}, ${loadTool});`,
  ].join('\n');
}

/**
 * The tool and everything it imports as one CommonJS function body (see load.ts), or
 * undefined when the tool needs what only an ES module has (top-level await, an
 * `import.meta` other than url, filename and dirname): it is then bundled as a module.
 */
async function toolBundle(entry: string, minify: boolean, bundle: Bundle): Promise<string | undefined> {
  const define = Object.fromEntries(['url', 'filename', 'dirname'].map((key) => [`import.meta.${key}`, `${IMPORT_META}.${key}`]));
  try {
    const { code, warnings } = await bundle(`import ${JSON.stringify(entry)};`, { format: 'cjs', minify, define, plugins: [englishZod] });
    return warnings.some((text) => text.includes('import.meta')) ? undefined : code;
  } catch {
    // Top-level await. Any other failure fails the ES module bundle too, with its message.
    return undefined;
  }
}

const BUILTIN = new RegExp(`^(node:.+|${builtinModules.map((name) => name.replace(/[/]/g, '\\/')).join('|')})$`);
const NAMESPACE = 'twylt-builtin';
/** What `process.moduleLoadList` shows of Node's public modules in a bare Node 20 process. */
const PRELOADED = new Set(['async_hooks', 'buffer', 'events', 'fs', 'module', 'path', 'querystring', 'timers', 'url', 'util']);

/**
 * In an ES module bundle, Node's own modules load when the code that uses them first runs,
 * as in the unbuilt tool: an ES import of a builtin would be hoisted to the top of the single
 * file and load at start-up even for code that never runs (node:crypto alone costs several
 * ms). A CommonJS bundle needs no help: esbuild leaves each `require` where the import was.
 * The modules Node has loaded before any user code are imported as they are: the CommonJS
 * stand-in would only add a copy of their exports at start-up.
 */
const lazyBuiltins: Plugin = {
  name: 'twylt-lazy-builtins',
  setup(build) {
    build.onResolve({ filter: BUILTIN }, (args) =>
      args.namespace === NAMESPACE || PRELOADED.has(args.path.replace(/^node:/, ''))
        ? { path: args.path, external: true }
        : { path: args.path, namespace: NAMESPACE },
    );
    // A CommonJS stand-in: esbuild then reads its properties where they are used.
    build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

/**
 * Zod re-exports all its locales as one namespace (`z.locales`), which esbuild cannot
 * tree-shake: more than half of a bundled Zod is error messages in some fifty languages
 * that no run uses (twylt writes its own messages; Zod registers English by default). The
 * build keeps English; any other locale is a stand-in that says why it is missing, so a
 * tool that configures one fails at build time, when the build asks it for its json_spec.
 */
const englishZod: Plugin = {
  name: 'twylt-english-zod',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: join(dirname(args.importer), args.path), namespace: ZOD_LOCALES } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: ZOD_LOCALES }, async (args) => {
      const names = [...(await readFile(args.path, 'utf8')).matchAll(/default as (\w+)/g)].map((match) => match[1]!);
      const lines = names.map((name) =>
        name === 'en'
          ? `export { default as en } from ${JSON.stringify(join(dirname(args.path), 'en.js'))};`
          : `export const ${name} = () => { throw new Error(${JSON.stringify(`Zod's "${name}" locale is not in this file: twylt build keeps only Zod's English messages`)}); };`,
      );
      return { contents: lines.join('\n'), loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};
const ZOD_LOCALES = 'twylt-zod-locales';

/** The peer dependencies each build needs: esbuild, and postject or the runtime for an executable. */
async function loadPeers(kind: BuildOptions['kind'], runtime: ExecutableRuntime, from: string): Promise<{ esbuild: typeof import('esbuild'); postject?: string; compiler?: string }> {
  const missing: string[] = [];
  let esbuild: typeof import('esbuild') | undefined;
  let postject: string | undefined;
  let compiler: string | undefined;
  try {
    esbuild = await import('esbuild');
  } catch (error) {
    if (!notFound(error, 'esbuild')) throw new BuildError(`twylt build needs esbuild, which is installed but cannot be loaded: ${(error as Error).message}`);
    missing.push('esbuild');
  }
  if (kind === 'executable' && runtime === 'node') {
    try {
      postject = createRequire(import.meta.url).resolve('postject');
    } catch {
      missing.push('postject');
    }
  } else if (runtime !== 'node') {
    compiler = findRuntime(runtime, from);
    if (compiler === undefined) missing.push(runtime);
  }
  if (missing.length > 0) throw new BuildError(installHint(runtime === 'node' ? kind : `executable --runtime ${runtime}`, missing));
  return { esbuild: esbuild!, postject, compiler };
}

function notFound(error: unknown, name: string): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && (message ?? '').includes(`'${name}'`);
}

/** What to install, with the versions twylt's package.json asks of its optional peers. */
function installHint(kind: string | undefined, missing: string[]): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { peerDependencies: Record<string, string> };
  const command = kind === 'module' || kind === undefined ? 'twylt build' : `twylt build --${kind}`;
  const [are, them, what] = missing.length > 1 ? ['are', 'them', 'optional peer dependencies'] : ['is', 'it', 'an optional peer dependency'];
  return (
    `${missing.join(' and ')} ${are} not installed: ${what} of twylt that only \`${command}\` needs (a tool's run never uses ${them}). Install with:\n` +
    `  npm install --save-dev ${missing.map((name) => `"${name}@${manifest.peerDependencies[name]}"`).join(' ')}`
  );
}

/**
 * Runs the first bundle once for `describe json_spec`. It runs beside the source, so that
 * everything the answer depends on (the installed packages for default requirements) is
 * what the unbuilt tool sees.
 */
async function askSpec(entry: string, code: string): Promise<JsonSpec> {
  const probe = join(dirname(entry), `.${basename(entry)}.twylt-build-${process.pid}.mjs`);
  await writeFile(probe, code);
  try {
    const { code: exit, stdout, stderr } = await runQuiet(scriptCommand(probe, ['{"describe": "json_spec"}']), dirname(probe));
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

/** The output appears whole or not at all, executable like any tool; its folder is created. */
async function writeWhole(outfile: string, code: string): Promise<void> {
  const temporary = `${outfile}.${process.pid}.tmp`;
  try {
    await mkdir(dirname(outfile), { recursive: true });
    await writeFile(temporary, code);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new BuildError(`Cannot write ${outfile}: ${(error as Error).message}`);
  }
  await publish(temporary, outfile, 0o755);
}

/** Gives the finished temporary file its mode and its final name. */
async function publish(temporary: string, outfile: string, mode: number): Promise<void> {
  try {
    await chmod(temporary, mode);
    await rename(temporary, outfile);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new BuildError(`Cannot write ${outfile}: ${(error as Error).message}`);
  }
}
