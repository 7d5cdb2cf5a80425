/**
 * Each dependency where its importer is: every package a workspace package's built files
 * import is declared in that package's own package.json, and every dependency declared is
 * imported by it. A dependency declared one package up (by a dependent) resolves in the
 * workspace, where node_modules is shared, but not in a global install, where each
 * package of the prefix has its own tree (issue 36: `@opentelemetry/api` imported by twylt,
 * declared by twylt-mcp).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { parse } from '@babel/parser';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/process.js';

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const PACKAGES = ['twylt', 'twylt-mcp', 'twylt-ai'];

/** `@scope/name/sub` and `name/sub` to the package name. */
const packageOf = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

const bare = (specifier: string) => !specifier.startsWith('.') && !specifier.startsWith('/') && !specifier.includes(':') && !isBuiltin(specifier);

function* filesUnder(folder: string): Generator<string> {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path);
    else if (/\.(m?js|cjs)$/.test(entry.name)) yield path;
  }
}

/** The specifiers of static imports and re-exports, import() and require() of a string. */
function specifiersOf(source: string): string[] {
  const found: string[] = [];
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const n = node as Record<string, any>;
    if ((n.type === 'ImportDeclaration' || n.type === 'ExportAllDeclaration' || n.type === 'ExportNamedDeclaration') && n.source?.type === 'StringLiteral') found.push(n.source.value);
    if (n.type === 'ImportExpression' && n.source?.type === 'StringLiteral') found.push(n.source.value);
    if (n.type === 'CallExpression' && n.arguments?.[0]?.type === 'StringLiteral' && (n.callee?.type === 'Import' || (n.callee?.type === 'Identifier' && n.callee.name === 'require'))) found.push(n.arguments[0].value);
    for (const key of Object.keys(n)) if (key !== 'loc' && key !== 'start' && key !== 'end') visit(n[key]);
  };
  visit(parse(source, { sourceType: 'unambiguous', createImportExpressions: true, errorRecovery: true }).program);
  return found;
}

/** The packages a workspace package's dist imports, with one importing file each. */
function importsOf(name: string): Map<string, string> {
  const imports = new Map<string, string>();
  const dist = join(ROOT, 'packages', name, 'dist');
  for (const file of filesUnder(dist)) {
    for (const specifier of specifiersOf(readFileSync(file, 'utf8'))) {
      if (bare(specifier) && packageOf(specifier) !== name && !imports.has(packageOf(specifier))) imports.set(packageOf(specifier), file.slice(dist.length + 1));
    }
  }
  return imports;
}

describe('each dependency where its importer is', () => {
  it('reads imports of every form', () => {
    expect(specifiersOf("import a from 'a'; export * from '@s/b/c'; const c = await import('c'); require('d'); import('./e.js')")).toEqual(['a', '@s/b/c', 'c', 'd', './e.js']);
  });

  for (const name of PACKAGES) {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', name, 'package.json'), 'utf8')) as Manifest;
    const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
    const imports = importsOf(name);

    it(`${name}: every package its dist imports is a dependency or peer of its own`, () => {
      const undeclared = [...imports].filter(([pkg]) => !declared.has(pkg)).map(([pkg, file]) => `${pkg} (imported by ${file})`);
      expect(undeclared, `imported by ${name} but not in its package.json`).toEqual([]);
    });

    it(`${name}: every dependency it declares is imported by it`, () => {
      const unused = Object.keys(manifest.dependencies ?? {}).filter((pkg) => !imports.has(pkg));
      expect(unused, `dependencies of ${name} that no file of its dist imports: they belong to the package that imports them`).toEqual([]);
    });
  }
});
