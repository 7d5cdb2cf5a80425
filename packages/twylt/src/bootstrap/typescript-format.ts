/**
 * The module format of a `.ts` file that no package.json `"type"` governs, when the launcher
 * runs TypeScript through tsx (Node before 22.18, ADR 0035).
 *
 * tsx takes such a file for CommonJS, as Node takes a `.js` file there; but with only tsx's
 * ESM hooks registered (the launcher's), Node's CommonJS loader gets the TypeScript source
 * itself, and an ES module tool dies with "Cannot require() ES Module ... in a cycle". So
 * such a file that imports or exports is an ES module, as Node 22.18+ decides (module
 * syntax detection); one that does not is left to tsx. A `"type"` keeps deciding.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasModuleSyntax } from '../requirements/imports.js';

/** Per folder: the `"type"` of the nearest package.json (null: none says), or undefined: unreadable, Node's answer stands. */
const typeOfFolder = new Map<string, string | null | undefined>();

/** Per file: whether it is written as an ES module. */
const moduleSyntax = new Map<string, boolean>();

/**
 * `"module"` for a `file:` URL of a `.ts` file that imports or exports and whose nearest
 * package.json has no `"type"` (or that has none); else undefined: the answer stands.
 */
export function typeScriptFormat(url: string): 'module' | undefined {
  if (!url.startsWith('file:') || !new URL(url).pathname.endsWith('.ts')) return undefined;
  const file = fileURLToPath(url);
  if (packageType(dirname(file)) !== null) return undefined;
  if (!moduleSyntax.has(file)) {
    let source: string | undefined;
    try {
      source = readFileSync(file, 'utf8');
    } catch {
      // unreadable: Node's loader says so itself
    }
    moduleSyntax.set(file, source !== undefined && hasModuleSyntax(source));
  }
  return moduleSyntax.get(file) ? 'module' : undefined;
}

function packageType(folder: string): string | null | undefined {
  if (typeOfFolder.has(folder)) return typeOfFolder.get(folder);
  let type: string | null | undefined;
  let text: string | undefined;
  try {
    text = readFileSync(join(folder, 'package.json'), 'utf8');
  } catch {
    // none here: the folder above decides, up to the root
  }
  if (text !== undefined) {
    try {
      const field = (JSON.parse(text) as { type?: unknown } | null)?.type;
      type = typeof field === 'string' ? field : null;
    } catch {
      type = undefined; // Node reports a broken package.json itself
    }
  } else type = dirname(folder) === folder ? null : packageType(dirname(folder));
  typeOfFolder.set(folder, type);
  return type;
}
