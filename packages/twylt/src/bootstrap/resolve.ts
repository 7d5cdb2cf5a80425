/**
 * Where a tool started by the scan's launcher (launch.ts) finds its packages, in this order:
 *
 * 1. as Node resolves from the importing file (the pack's own node_modules win);
 * 2. in each NODE_PATH folder, for ES module imports too (Node's ESM resolver ignores
 *    NODE_PATH; the scan records an installed environment there, ADR 0035);
 * 3. `twylt`, `twylt-ai`, `twylt-mcp`: the launcher's own installation (not on the npm
 *    registry, so a pack depending on them gets the scanning installation's copy).
 *
 * Only a bare specifier that failed with ERR_MODULE_NOT_FOUND falls through: relative paths,
 * URLs, built-ins and a package found with a missing export keep Node's own answer.
 * While tsx runs TypeScript, a `.ts` file that imports or exports and that no package.json
 * `"type"` governs is resolved as an ES module (typescript-format.ts).
 * Shared by the in-thread hooks (registerHooks) and the hooks thread (register).
 */
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { typeScriptFormat } from './typescript-format.js';

/** What the fallbacks need, passed to the hooks thread as data. */
export interface ResolveData {
  /** `file:` URLs to resolve from, one per NODE_PATH folder (a file inside it). */
  pathParents: string[];
  /** A `file:` URL inside the launcher's own twylt package. */
  ownParent: string;
  /** tsx runs TypeScript here: a `.ts` file without a package `"type"` that imports or exports is an ES module. */
  typeScriptModules: boolean;
}

/** Our own packages: never installed from the registry while it does not hold them. */
export const OWN_PACKAGE = /^twylt(-ai|-mcp)?(\/|$)/;

export function resolveData(nodePath: string | undefined, ownParent: string, typeScriptModules: boolean): ResolveData {
  // `x` inside a node_modules folder: the resolver looks for PACKAGE in that folder.
  const folders = (nodePath ?? '').split(process.platform === 'win32' ? ';' : ':').filter((folder) => folder !== '');
  return { pathParents: folders.map((folder) => pathToFileURL(join(folder, 'x')).href), ownParent, typeScriptModules };
}

/** The parents to try, in order, after `specifier` failed from its importer; empty when none applies. */
export function fallbackParents(specifier: string, error: unknown, data: ResolveData): string[] {
  if ((error as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND' || !isBare(specifier)) return [];
  return OWN_PACKAGE.test(specifier) ? [...data.pathParents, data.ownParent] : data.pathParents;
}

/** A package name with or without a subpath: not relative, absolute, a URL, `#imports` or a built-in. */
function isBare(specifier: string): boolean {
  if (/^[./#]/.test(specifier) || /^[a-zA-Z][a-zA-Z\d+.-]*:/.test(specifier)) return false;
  return !isBuiltin(specifier);
}

type Resolved = { url: string; format?: string | null };
type Context = { parentURL?: string };

/** The synchronous resolve hook (module.registerHooks). */
export function resolveSync(data: ResolveData) {
  return (specifier: string, context: Context, next: (specifier: string, context?: Context) => Resolved): Resolved => {
    try {
      return withFormat(next(specifier, context), data);
    } catch (error) {
      for (const parentURL of fallbackParents(specifier, error, data)) {
        try {
          return withFormat(next(specifier, { ...context, parentURL }), data);
        } catch {
          // not there either: the next folder, else Node's own first error
        }
      }
      throw error;
    }
  };
}

/** The asynchronous resolve hook (module.register's hooks thread). */
export function resolveAsync(data: ResolveData) {
  return async (specifier: string, context: Context, next: (specifier: string, context?: Context) => Promise<Resolved>): Promise<Resolved> => {
    try {
      return withFormat(await next(specifier, context), data);
    } catch (error) {
      for (const parentURL of fallbackParents(specifier, error, data)) {
        try {
          return withFormat(await next(specifier, { ...context, parentURL }), data);
        } catch {
          // not there either
        }
      }
      throw error;
    }
  };
}

/** The resolution, with the format of a `.ts` file tsx would otherwise take for CommonJS. */
function withFormat(resolved: Resolved, data: ResolveData): Resolved {
  const format = data.typeScriptModules ? typeScriptFormat(resolved.url) : undefined;
  return format === undefined ? resolved : { ...resolved, format };
}
