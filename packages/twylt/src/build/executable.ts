/**
 * `twylt build --executable` and `--snapshot-blob`: from the snapshot entry script (a
 * CommonJS bundle whose top level calls snapshot.ts's `snapshotTool`) to a V8 startup
 * snapshot, made by the Node that runs the build, and for an executable to a copy of that
 * Node with the snapshot injected (Node's single executable applications, with postject).
 * See ADR 0010.
 */
import { chmod, copyFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runQuiet } from './child.js';
import { hostRuntime } from './compile.js';
import { BuildError } from './errors.js';
import { type MakeProduct, tail } from './product.js';
import { REFUSED } from './refusal.js';

export type SnapshotKind = 'executable' | 'snapshot-blob';

/** The resource and fuse names Node looks for in a single executable application. */
const SEA_RESOURCE = 'NODE_SEA_BLOB';
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
/** A tool module that has not finished evaluating by then keeps the event loop alive. */
const SNAPSHOT_TIMEOUT_MS = 120_000;

/**
 * A Node snapshot is made by the Node that runs the build, and a copy of it becomes the
 * executable: Bun and Deno have neither. Node 20.12 is the first Node 20 whose single
 * executables take a startup snapshot.
 */
export function checkPlatform(kind: SnapshotKind): void {
  const host = hostRuntime();
  if (host !== undefined) {
    const instead = kind === 'executable' ? `, or make a ${host.label.split(' ')[0]} executable with --executable --runtime ${host.name}` : '';
    throw new BuildError(`twylt build --${kind} makes a Node ${kind === 'executable' ? 'executable' : 'snapshot'} from the Node that runs the build, and this is ${host.label}: run the build with Node (npx twylt build ...)${instead}`);
  }
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  if (major === 20 && minor < 12) throw new BuildError(`twylt build --${kind} needs Node 20.12 or later (startup snapshots of user code); this is Node ${process.versions.node}`);
  if (kind === 'executable' && process.platform !== 'linux') {
    throw new BuildError(
      `twylt build --executable makes Linux executables only for now (this is ${process.platform}): ` +
        'see twylt build --help for what macOS (codesign) and Windows need',
    );
  }
}

/**
 * The Node target: the snapshot (or the executable holding it), made in `work`; the command
 * returned runs it. The tool's module is evaluated in `cwd`, as the build's describe run
 * evaluated it.
 */
export function snapshotProduct(kind: SnapshotKind, entryScript: string, postject: string | undefined, cwd: string, step: (text: string) => void = () => {}): MakeProduct {
  return async (work) => {
    step('building the startup snapshot');
    const script = join(work, 'snapshot-entry.cjs');
    await writeFile(script, entryScript);
    const blob = join(work, kind === 'executable' ? 'sea-prep.blob' : 'snapshot.blob');
    if (kind === 'executable') {
      const config = { main: script, output: blob, disableExperimentalSEAWarning: true, useSnapshot: true };
      await writeFile(join(work, 'sea-config.json'), JSON.stringify(config));
      await buildSnapshot(['--experimental-sea-config', join(work, 'sea-config.json')], cwd);
      step(`injecting the snapshot into a copy of ${process.execPath}`);
      return [await injectInto(join(work, 'tool'), blob, postject!)];
    }
    await buildSnapshot(['--snapshot-blob', blob, '--build-snapshot', script], cwd);
    return [process.execPath, '--snapshot-blob', blob];
  };
}

/** Runs Node's snapshot builder on the entry script; a refusal of snapshot.ts becomes the error. */
async function buildSnapshot(args: string[], cwd: string): Promise<void> {
  const result = await runQuiet([process.execPath, ...args], cwd, SNAPSHOT_TIMEOUT_MS);
  const refusal = result.stderr.split('\n').find((line) => line.startsWith(REFUSED));
  if (refusal) throw new BuildError(`The tool cannot be snapshotted: ${JSON.parse(refusal.slice(REFUSED.length)) as string}`);
  if (result.timedOut) {
    throw new BuildError(`The snapshot was not taken within ${SNAPSHOT_TIMEOUT_MS / 1000} s: something the tool's module started keeps Node's event loop alive`);
  }
  if (result.code !== 0) throw new BuildError(`Node could not build the startup snapshot (exit ${result.code}):\n${tail(result)}`);
}

/** A copy of this Node with the snapshot injected (postject runs in a process of its own: it prints, and holds the binary in memory twice). */
async function injectInto(binary: string, blob: string, postject: string): Promise<string> {
  await copyFile(process.execPath, binary);
  await chmod(binary, 0o755);
  const inject = [
    'const [api, file, resource, blob, fuse] = process.argv.slice(1);',
    "require(api).inject(file, resource, require('node:fs').readFileSync(blob), { sentinelFuse: fuse })",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source code for `node -e`, not a template
    '  .catch((error) => { process.stderr.write(`${error.message}\\n`); process.exit(1); });',
  ].join('\n');
  const result = await runQuiet([process.execPath, '-e', inject, postject, binary, SEA_RESOURCE, blob, SEA_FUSE], dirname(binary), SNAPSHOT_TIMEOUT_MS);
  if (result.code !== 0) {
    const hint = result.stderr.includes('Could not find the sentinel')
      ? `\n${process.execPath} is a Node built without single executable application support`
      : '';
    throw new BuildError(`postject could not inject the snapshot into a copy of ${process.execPath}:\n${tail(result)}${hint}`);
  }
  return binary;
}
