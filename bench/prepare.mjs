/**
 * Everything the benchmark runs on, made fresh under .bench-tmp/: the built single files
 * (`twylt build`), the echo executable and snapshot blob (`--executable`, `--snapshot-blob`),
 * the small and large inputs, and one working directory per file-mode row.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

export const ROOT = new URL('..', import.meta.url).pathname;
export const TMP = join(ROOT, '.bench-tmp');

export const SMALL_INPUT = { text: 'hello' };

/** 200 000 small objects, about 11 MB of compact JSON. */
function listPayload() {
  const items = [];
  for (let id = 0; id < 200_000; id++) items.push({ id, name: `item ${id}`, tags: ['a', 'b'], ok: id % 2 === 0 });
  return { items };
}

/** One string of 20 000 000 characters. */
function stringPayload() {
  return { text: 'the quick brown fox jumps over the lazy dog; '.repeat(444_445).slice(0, 20_000_000) };
}

export const PAYLOADS = {
  list: { label: '200 000-object list', make: listPayload, tool: 'bench/tools/echo_items.mjs' },
  string: { label: '20 MB string', make: stringPayload, tool: 'build/examples/echo/tool.js' },
};

/** A directory holding `input.json` with the given value; returns its path. */
function inputDir(name, value) {
  const dir = join(TMP, name);
  mkdirSync(dir, { recursive: true });
  const text = JSON.stringify(value);
  writeFileSync(join(dir, 'input.json'), text);
  return dir;
}

/**
 * Builds one example with the package's own builder: a single file (kind 'module'), an
 * executable or a snapshot blob. Returns the file, its size and how long the build took.
 */
async function buildExample(name, kind = 'module') {
  const builder = join(ROOT, 'packages/twylt/dist/build/index.js');
  if (!existsSync(builder)) return { unavailable: 'n/a (twylt build not built)' };
  const { buildTool } = await import(builder);
  const outfile = join(TMP, 'built', { module: `${name}.mjs`, executable: name, 'snapshot-blob': `${name}.blob` }[kind]);
  const started = performance.now();
  try {
    const { bytes } = await buildTool({ entry: join(ROOT, 'examples', name, 'tool.ts'), outfile, kind });
    return { file: outfile, bytes, buildMs: performance.now() - started };
  } catch (error) {
    // An executable needs postject and Linux: the row says why it is missing.
    if (kind === 'module') throw error;
    return { unavailable: `n/a (${error.message.split('\n')[0]})` };
  }
}

/** The zod floor bundled and minified as a built file is: the floor of a built Zod tool. */
async function bundleZodFloor() {
  const { build } = await import('esbuild');
  const outfile = join(TMP, 'zod-parse.bundled.mjs');
  await build({ entryPoints: [join(ROOT, 'bench/floors/zod-parse.mjs')], outfile, bundle: true, minify: true, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
  return outfile;
}

/**
 * The floors of a snapshot: bench/floors/snapshot-print.cjs as a single executable (built
 * the way twylt build does, with postject's command line) and as a blob.
 */
function snapshotFloors() {
  const script = join(ROOT, 'bench/floors/snapshot-print.cjs');
  const dir = join(TMP, 'snapshot-floor');
  mkdirSync(dir, { recursive: true });
  const blob = join(dir, 'print.blob');
  const quiet = { cwd: dir, stdio: 'ignore' };
  execFileSync(process.execPath, ['--snapshot-blob', blob, '--build-snapshot', script], quiet);
  let executable;
  try {
    const postject = createRequire(import.meta.url).resolve('postject/dist/cli.js');
    const config = join(dir, 'sea-config.json');
    writeFileSync(config, JSON.stringify({ main: script, output: join(dir, 'sea-prep.blob'), disableExperimentalSEAWarning: true, useSnapshot: true }));
    execFileSync(process.execPath, ['--experimental-sea-config', config], quiet);
    executable = join(dir, 'print');
    copyFileSync(process.execPath, executable);
    chmodSync(executable, 0o755);
    execFileSync(process.execPath, [postject, executable, 'NODE_SEA_BLOB', join(dir, 'sea-prep.blob'), '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'], quiet);
  } catch (error) {
    executable = undefined;
    process.stderr.write(`no single-executable floor: ${error.message.split('\n')[0]}\n`);
  }
  return { blob, executable };
}

export async function prepare({ payloads, modules, snapshots }) {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const small = inputDir('small', SMALL_INPUT);
  const built = modules ? { echo: await buildExample('echo'), echo_json_schema: await buildExample('echo_json_schema') } : {};
  if (snapshots) {
    built['echo executable'] = await buildExample('echo', 'executable');
    built['echo snapshot blob'] = await buildExample('echo', 'snapshot-blob');
  }
  const zodBundled = await bundleZodFloor();
  const snapshot = snapshots ? snapshotFloors() : {};
  const large = {};
  if (payloads) {
    for (const [id, payload] of Object.entries(PAYLOADS)) large[id] = inputDir(`payload-${id}`, payload.make());
  }
  return { small, built, large, zodBundled, snapshot };
}
