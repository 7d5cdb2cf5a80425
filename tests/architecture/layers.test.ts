/**
 * The layers of the packages (ADR 0041), checked on the import graph of their TypeScript
 * sources: no circle, and no import the table below forbids. The table is the rule: a new
 * folder gets a row, a new edge between layers is a decision made here, in review.
 *
 * Plant `import '../client/index.js'` in packages/twylt/src/tool/run.ts and "every import
 * keeps to the layers" fails, naming the file, the line and the two layers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/process.js';
import { circles, importsOfFile, sourceFiles, type ImportEdge } from './import-graph.js';

/**
 * The layers of packages/twylt/src, by path (the longest prefix names a file's layer), and
 * what each may import besides itself. Bottom first. `lazy`: layers imported only with
 * `import()`, so that their weight is loaded when a run needs it; `types`: layers imported
 * only for types, erased before the code runs (a browser page naming a server's types).
 */
const TWYLT_LAYERS: Record<string, { paths: string[]; uses: string[]; lazy?: string[]; types?: string[] }> = {
  // The protocol: constants, errors, the spec's types, exact integers. Imports nothing of ours.
  protocol: { paths: ['protocol/'], uses: [] },
  schema: { paths: ['schema/'], uses: ['protocol'] },
  // The tool-author side: the run loop, guardrails, the TypeScript launcher, the build of
  // executables, and what a describe derives (requirements/). None of it imports the
  // consumer side (ADR 0003, ADR 0022): every call of a tool pays for what it loads.
  guardrails: { paths: ['guardrails/'], uses: ['protocol'] },
  requirements: { paths: ['requirements/'], uses: ['protocol'] },
  tool: { paths: ['tool/'], uses: ['protocol', 'schema', 'guardrails'], lazy: ['requirements'] },
  launcher: { paths: ['bootstrap/'], uses: ['protocol', 'schema', 'tool', 'requirements'] },
  build: { paths: ['build/'], uses: ['protocol', 'schema', 'tool', 'requirements'] },
  // `twylt`, the tool author's entry point.
  'author entry': { paths: ['index.ts'], uses: ['protocol', 'schema', 'tool'] },
  // The consumer side. The diagnostics channels (Node-only) are below all of it.
  events: { paths: ['events/'], uses: [] },
  client: { paths: ['client/'], uses: ['protocol', 'schema', 'events'] },
  // HTTP plumbing of every consumer server: access, authentication, OAuth, bodies, binding.
  server: { paths: ['server/'], uses: ['protocol', 'client'] },
  // Serving a set of tools: entries, policy, runner, limiter, warm pools, sandbox, search.
  // It reads tool files the way the launcher does (bootstrap/resolve, bootstrap/typescript).
  toolset: { paths: ['toolset/'], uses: ['protocol', 'schema', 'events', 'client', 'server', 'launcher'] },
  // Catalogs and scans build on the toolset, never the other way round.
  catalog: { paths: ['toolset/catalog/'], uses: ['protocol', 'schema', 'events', 'client', 'server', 'launcher', 'toolset'] },
  'toolset entry': { paths: ['toolset/index.ts'], uses: ['protocol', 'schema', 'events', 'client', 'server', 'toolset', 'catalog'] },
  // Consumers of the toolset.
  observe: { paths: ['observe/'], uses: ['protocol', 'events', 'client', 'server', 'toolset'] },
  conformance: { paths: ['conformance/'], uses: ['protocol', 'schema', 'client'] },
  // The inspector's API shapes, shared by its server and its page (which runs in a browser).
  'inspect api': { paths: ['inspect/types.ts'], uses: ['protocol'], types: ['toolset'] },
  'inspect page': { paths: ['inspect/ui/'], uses: ['protocol', 'inspect api'] },
  inspect: { paths: ['inspect/'], uses: ['protocol', 'schema', 'events', 'client', 'server', 'toolset', 'catalog', 'inspect api'] },
  // The `twylt` command: the top, it may use every layer.
  cli: {
    paths: ['cli/'],
    uses: ['protocol', 'schema', 'guardrails', 'requirements', 'tool', 'launcher', 'build', 'events', 'client', 'server', 'toolset', 'catalog', 'toolset entry', 'observe', 'conformance', 'inspect api', 'inspect'],
  },
};

/**
 * Circles known when this test was written, each to be removed by the change named. A
 * circle not listed fails; so does a listed one that is gone (delete its row).
 */
const KNOWN_CIRCLES: { files: string[]; why: string }[] = [];

/**
 * twylt's dependencies are optional weight (ADR 0003): imported with `import()`, so that a
 * run loads one only when it needs it. Static imports of a package only here: the inspector's
 * page (bundled for the browser) and the zod adapter (itself loaded with `import()`).
 */
const STATIC_PACKAGES: Record<string, string[]> = {
  'inspect/ui/': ['preact', 'preact/hooks'],
  'schema/zod.ts': ['zod/v4/core'],
};

/** The packages beside twylt: each reaches twylt only through its public entry points (package.json "exports"). */
const CONSUMER_PACKAGES = ['twylt-mcp', 'twylt-ai'];

const TWYLT_SRC = 'packages/twylt/src/';
const files = ['twylt', ...CONSUMER_PACKAGES].flatMap((name) => sourceFiles(ROOT, `packages/${name}/src`));
const edges = files.flatMap((file) => importsOfFile(ROOT, file));
const exported = Object.keys((JSON.parse(readFileSync(join(ROOT, 'packages/twylt/package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports).map((key) => `twylt${key.slice(1)}`);

/** The layer of a file of packages/twylt/src: the longest path that names it. */
function layerOf(file: string): string | undefined {
  const inside = file.slice(TWYLT_SRC.length);
  let best: { name: string; length: number } | undefined;
  for (const [name, layer] of Object.entries(TWYLT_LAYERS)) {
    for (const path of layer.paths) {
      const matches = path.endsWith('/') ? inside.startsWith(path) : inside === path;
      if (matches && path.length > (best?.length ?? -1)) best = { name, length: path.length };
    }
  }
  return best?.name;
}

const where = (edge: ImportEdge) => `${edge.from}:${edge.line} imports '${edge.specifier}'`;

/** What is wrong with one edge, or undefined. */
function layerViolation(edge: ImportEdge): string | undefined {
  const ownPackage = edge.from.split('/')[1]!;
  if (edge.to.startsWith('packages/')) {
    const targetPackage = edge.to.split('/')[1]!;
    if (targetPackage !== ownPackage) return `${where(edge)}: another package's files, not its public entry point`;
    if (ownPackage !== 'twylt') return undefined;
    const from = layerOf(edge.from);
    const to = layerOf(edge.to);
    if (!from || !to || from === to) return undefined; // unplaced files are reported by their own test
    const rule = TWYLT_LAYERS[from]!;
    if (rule.uses.includes(to)) return undefined;
    if (rule.lazy?.includes(to)) return edge.lazy || edge.typeOnly ? undefined : `${where(edge)}: ${from} loads ${to} only with import() (its weight is paid when a run needs it)`;
    if (rule.types?.includes(to)) return edge.typeOnly ? undefined : `${where(edge)}: ${from} imports only types of ${to}`;
    return `${where(edge)}: ${from} may not import ${to}`;
  }
  const bare = edge.to;
  const ours = bare === 'twylt' || bare.startsWith('twylt/') || bare.startsWith('twylt-');
  if (!ours) return ownPackage === 'twylt' ? staticDependency(edge) : undefined;
  if (ownPackage === 'twylt') return `${where(edge)}: twylt imports itself or a package above it by name`;
  if (bare.startsWith('twylt-')) return `${where(edge)}: ${ownPackage} may not import another consumer package`;
  return exported.includes(bare) ? undefined : `${where(edge)}: not one of twylt's public entry points (${exported.join(', ')})`;
}

/** A dependency of twylt imported statically where STATIC_PACKAGES does not allow it. */
function staticDependency(edge: ImportEdge): string | undefined {
  if (edge.to.startsWith('node:') || edge.lazy || edge.typeOnly) return undefined;
  const inside = edge.from.slice(TWYLT_SRC.length);
  const allowed = Object.entries(STATIC_PACKAGES).some(([path, names]) => (path.endsWith('/') ? inside.startsWith(path) : inside === path) && names.includes(edge.to));
  return allowed ? undefined : `${where(edge)}: a dependency, loaded with import() only (optional weight)`;
}

describe('the import graph (ADR 0041)', () => {
  it('reads every kind of import: static, type-only, re-exports, import() in code and in types', () => {
    const source = [
      "import { a } from './a.js';",
      "import type { B } from './b.js';",
      "import { type C } from './c.js';",
      "export * from './d.js';",
      "export type { E } from './e.js';",
      "const f = await import('./f.js');",
      "let g: import('./g.js').G;",
      "import './h.js';",
      "import x from 'node:fs';",
    ].join('\n');
    const found = importsOfFile(ROOT, 'packages/twylt/src/tool/x.ts', source).map(({ specifier, typeOnly, lazy }) => [specifier, typeOnly, lazy]);
    expect(found).toEqual([
      ['./a.js', false, false],
      ['./b.js', true, false],
      ['./c.js', true, false],
      ['./d.js', false, false],
      ['./e.js', true, false],
      ['./f.js', false, true],
      ['./g.js', true, false],
      ['./h.js', false, false],
      ['node:fs', false, false],
    ]);
  });

  it('finds circles, and only circles', () => {
    const edge = (from: string, to: string) => ({ from, to });
    expect(circles([edge('a', 'b'), edge('b', 'c'), edge('c', 'a'), edge('c', 'd'), edge('e', 'e')])).toEqual([['a', 'b', 'c'], ['e']]);
    expect(circles([edge('a', 'b'), edge('a', 'c'), edge('b', 'c')])).toEqual([]);
  });

  it('reads the real sources: hundreds of files and imports, every relative import found', () => {
    expect(files.length).toBeGreaterThan(200);
    expect(edges.length).toBeGreaterThan(1000);
    const unresolved = edges.filter((edge) => edge.specifier.startsWith('.') && !files.includes(edge.to) && !/\.(css|json)$/.test(edge.to));
    expect(unresolved.map(where)).toEqual([]);
  });

  it('has no circle but the known ones (each still there)', () => {
    const found = circles(edges.filter((edge) => edge.to.startsWith('packages/')));
    const known = KNOWN_CIRCLES.map((circle) => [...circle.files].sort());
    expect(found.filter((circle) => !known.some((files) => files.join() === circle.join()))).toEqual([]);
    expect(known.filter((files) => !found.some((circle) => circle.join() === files.join()))).toEqual([]);
  });

  it('places every file of packages/twylt/src in a layer', () => {
    expect(files.filter((file) => file.startsWith(TWYLT_SRC) && layerOf(file) === undefined)).toEqual([]);
  });

  it('every import keeps to the layers, dependencies load lazily, and the other packages use twylt by its public entry points', () => {
    expect(edges.map(layerViolation).filter(Boolean)).toEqual([]);
  });

  it('refuses what the layers forbid (rules checked on planted edges)', () => {
    const planted = (from: string, to: string, specifier: string, marks: Partial<ImportEdge> = {}): ImportEdge => ({ from, to, specifier, typeOnly: false, lazy: false, line: 1, ...marks });
    // The tool-author side never imports the consumer side.
    expect(layerViolation(planted(`${TWYLT_SRC}tool/run.ts`, `${TWYLT_SRC}client/index.ts`, '../client/index.js'))).toMatch(/tool may not import client/);
    expect(layerViolation(planted(`${TWYLT_SRC}index.ts`, `${TWYLT_SRC}toolset/runner.ts`, './toolset/runner.js'))).toMatch(/author entry may not import toolset/);
    // The client is below the toolset; the toolset's core below its catalogs.
    expect(layerViolation(planted(`${TWYLT_SRC}client/spawn.ts`, `${TWYLT_SRC}toolset/entry.ts`, '../toolset/entry.js'))).toMatch(/client may not import toolset/);
    expect(layerViolation(planted(`${TWYLT_SRC}toolset/describe.ts`, `${TWYLT_SRC}toolset/catalog/scan.ts`, './catalog/scan.js'))).toMatch(/toolset may not import catalog/);
    // Optional weight stays lazy: a static import of it is refused, import() and types are not.
    expect(layerViolation(planted(`${TWYLT_SRC}tool/describe.ts`, `${TWYLT_SRC}requirements/default-requirements.ts`, '../requirements/default-requirements.js'))).toMatch(/only with import\(\)/);
    expect(layerViolation(planted(`${TWYLT_SRC}tool/describe.ts`, `${TWYLT_SRC}requirements/default-requirements.ts`, '../requirements/default-requirements.js', { lazy: true }))).toBeUndefined();
    expect(layerViolation(planted(`${TWYLT_SRC}inspect/types.ts`, `${TWYLT_SRC}toolset/failure-kinds.ts`, '../toolset/failure-kinds.js'))).toMatch(/only types of toolset/);
    // A dependency is loaded when needed.
    expect(layerViolation(planted(`${TWYLT_SRC}client/schema-check.ts`, 'ajv', 'ajv'))).toMatch(/import\(\) only/);
    expect(layerViolation(planted(`${TWYLT_SRC}client/schema-check.ts`, 'ajv', 'ajv', { lazy: true }))).toBeUndefined();
    expect(layerViolation(planted(`${TWYLT_SRC}client/spawn.ts`, 'node:child_process', 'node:child_process'))).toBeUndefined();
    // The other packages: public entry points only.
    expect(layerViolation(planted('packages/twylt-mcp/src/http.ts', `${TWYLT_SRC}server/access.ts`, '../../twylt/src/server/access.js'))).toMatch(/public entry point/);
    expect(layerViolation(planted('packages/twylt-mcp/src/http.ts', 'twylt/server/access', 'twylt/server/access'))).toMatch(/public entry points/);
    expect(layerViolation(planted('packages/twylt-ai/src/index.ts', 'twylt-mcp', 'twylt-mcp'))).toMatch(/another consumer package/);
    expect(layerViolation(planted('packages/twylt-mcp/src/http.ts', 'twylt/server', 'twylt/server'))).toBeUndefined();
  });
});
