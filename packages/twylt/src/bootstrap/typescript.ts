/**
 * TypeScript tool files on a runtime that cannot run them itself (Node before 22.18): through
 * tsx, the tool project's own (found from the tool's folder upward, as Node resolves it), else
 * the one installed beside this twylt. Shared by the scan (is there a way to run it?) and the
 * launcher (register it).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Whether this runtime runs .ts files itself: Node 22.18+ (type stripping), Bun, Deno. */
export function runsTypeScript(): boolean {
  const versions = process.versions as NodeJS.ProcessVersions & { bun?: string; deno?: string };
  if (versions.bun !== undefined || versions.deno !== undefined) return true;
  const typescript = (process.features as { typescript?: string | false }).typescript;
  return typescript === 'strip' || typescript === 'transform';
}

export function isTypeScript(file: string): boolean {
  return ['.ts', '.mts', '.cts'].includes(extname(file));
}

/** The `file:` URL of tsx's ESM API that serves `toolFile`, or undefined when neither place has tsx. */
export function findTsx(toolFile: string): string | undefined {
  for (const from of [toolFile, import.meta.url]) {
    let manifest: string;
    try {
      manifest = createRequire(from).resolve('tsx/package.json');
    } catch {
      continue; // not installed there
    }
    // The ESM build of `tsx/esm/api` (its CommonJS build cannot register from an ES module).
    const exported = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: Record<string, unknown> }).exports?.['./esm/api'];
    const target = esmTarget(exported);
    if (target !== undefined) return pathToFileURL(join(dirname(manifest), target)).href;
  }
  return undefined;
}

/** The `import` target of a package.json exports entry (a string, or `{import: string | {default}}`). */
function esmTarget(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (typeof entry !== 'object' || entry === null) return undefined;
  const chosen = (entry as Record<string, unknown>).import ?? (entry as Record<string, unknown>).default;
  return chosen === entry ? undefined : esmTarget(chosen);
}
