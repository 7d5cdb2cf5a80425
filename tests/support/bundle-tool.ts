/**
 * Bundle a TypeScript tool (and everything it imports, the built twylt runtime included)
 * into one ES module, so that a suite that starts it a hundred times pays Node's start-up
 * only, not a TypeScript loader's on every run. The code that runs is the same.
 */
import { basename, dirname, join } from 'node:path';
import { build } from 'esbuild';

export async function bundleTool(entry: string, outDir: string): Promise<string> {
  const outfile = join(outDir, `${basename(dirname(entry))}-${basename(entry, '.ts')}.mjs`);
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
    // Bundled CommonJS dependencies may call require().
    banner: { js: "import { createRequire as __twyltRequire } from 'node:module'; const require = __twyltRequire(import.meta.url);" },
  });
  return outfile;
}
