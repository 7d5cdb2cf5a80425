/**
 * The module format of a `.ts` file that no package.json `"type"` governs, when the launcher
 * runs TypeScript through tsx (Node before 22.18, ADR 0035).
 *
 * tsx takes such a file for CommonJS, as Node takes a `.js` file there; but with only tsx's
 * ESM hooks registered (the launcher's), Node's CommonJS loader gets the TypeScript source
 * itself: an ES module tool dies with "Cannot require() ES Module ... in a cycle", a
 * CommonJS one with a syntax error. So such a `.ts` file is an ES module, as a `.mts` file
 * is: what twylt tools are (twylt is an ES module package), and what Node 22.18+ makes of
 * one that imports or exports. A `"type"` in its package.json keeps deciding.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Per folder: the `"type"` of the nearest package.json (null: none says), or undefined: unreadable, Node's answer stands. */
const typeOfFolder = new Map<string, string | null | undefined>();

/** `"module"` for a `file:` URL of a `.ts` file whose nearest package.json has no `"type"` (or that has none); else undefined. */
export function typeScriptFormat(url: string): 'module' | undefined {
  if (!url.startsWith('file:') || !new URL(url).pathname.endsWith('.ts')) return undefined;
  return packageType(dirname(fileURLToPath(url))) === null ? 'module' : undefined;
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
