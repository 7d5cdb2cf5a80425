/**
 * The import graph of the packages' TypeScript sources, read with the TypeScript compiler's
 * parser (a devDependency): every `import`, `export ... from`, `import()` and `import('x')`
 * type, each edge marked as erased (types only) or lazy (`import()` in code).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  /** The importing file, relative to the root (`packages/twylt/src/tool/run.ts`). */
  from: string;
  /** The imported file relative to the root, or the bare specifier (`twylt/toolset`, `node:fs`). */
  to: string;
  /** As written in the source. */
  specifier: string;
  /** Erased before the code runs: `import type`, `export type`, braces of types only, `import('x')` in a type. */
  typeOnly: boolean;
  /** `import()` in code: loaded when that code runs, not with the importer. */
  lazy: boolean;
  line: number;
}

/** The `.ts` and `.tsx` files under `dir` (no declaration files), relative to `root`. */
export function sourceFiles(root: string, dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) found.push(relative(root, path));
    }
  };
  walk(join(root, dir));
  return found.sort();
}

/** The imports of one source file, in source order. */
export function importsOfFile(root: string, file: string, source = readFileSync(join(root, file), 'utf8')): ImportEdge[] {
  const parsed = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  const add = (literal: ts.Node, typeOnly: boolean, lazy: boolean) => {
    if (!ts.isStringLiteralLike(literal)) return;
    const specifier = literal.text;
    edges.push({
      from: file,
      to: target(root, file, specifier),
      specifier,
      typeOnly,
      lazy,
      line: parsed.getLineAndCharacterOfPosition(literal.getStart()).line + 1,
    });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      add(node.moduleSpecifier, importIsTypeOnly(node), false);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(node.moduleSpecifier, node.isTypeOnly || (named !== undefined && named.length > 0 && named.every((element) => element.isTypeOnly)), false);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0]) {
      add(node.arguments[0], false, true);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true, false);
    }
    ts.forEachChild(node, visit);
  };
  visit(parsed);
  return edges;
}

function importIsTypeOnly(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false; // `import './x.js'`: run for its effects
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly);
}

/** A relative specifier as the source file it names (`./x.js` is `x.ts` or `x.tsx`); a bare one as written. */
function target(root: string, file: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier;
  const path = relative(root, resolve(root, dirname(file), specifier));
  const base = path.replace(/\.(js|jsx|ts|tsx)$/, '');
  for (const candidate of [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) {
    try {
      readFileSync(join(root, candidate));
      return candidate;
    } catch {
      // not this one
    }
  }
  return path;
}

/**
 * The circles of the graph: its strongly connected components of more than one file, or of
 * one file that imports itself (Tarjan's algorithm), each sorted, the list sorted.
 */
export function circles(edges: readonly Pick<ImportEdge, 'from' | 'to'>[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (!next.has(from)) next.set(from, new Set());
    next.get(from)!.add(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const connect = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || next.get(node)?.has(node)) found.push(component.sort());
  };
  for (const node of next.keys()) if (!index.has(node)) connect(node);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
