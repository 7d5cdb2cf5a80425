/**
 * The package's JavaScript build (ADR 0005): the runtime bundled with esbuild into few files,
 * so a tool call reads a handful of modules instead of one per source file. Declarations come
 * from `tsc --emitDeclarationOnly` (the `build` script runs it after this). Then the page of
 * `twylt inspect` (ADR 0012): its Preact UI bundled for the browser into dist/inspect/ui/,
 * beside dist/inspect/server.js, which serves it.
 *
 * Every public entry point, and every module the code loads with `import()`, is an entry
 * point here: it keeps its path under dist/ (the package's exports, the `bin`, and
 * `build/entry.js` found beside `build/index.js`), and what it alone needs stays in it, so a
 * lazy import stays lazy. Code shared by several of them goes into dist/chunks/.
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const PUBLIC = ['index', 'bootstrap/index', 'bootstrap/launch', 'client/index', 'conformance/index', 'guardrails/index', 'protocol/index', 'server/index', 'toolset/index', 'toolset/search/index', 'observe/index', 'cli/main'];
/** Loaded with `import()`: each must be a file of its own, evaluated only when asked for. */
const LAZY = [
  'schema/zod', 'schema/standard', 'schema/json-validator',
  'tool/help', 'guardrails/run-hooks', 'requirements/default-requirements', 'bootstrap/resolve-hooks', 'client/schema-check',
  'cli/commands/describe', 'cli/commands/call', 'cli/commands/search', 'cli/commands/build', 'cli/commands/check',
  'build/index', 'build/entry', 'build/load', 'build/snapshot',
  'cli/commands/inspect', 'inspect/server', 'inspect/browser',
  'observe/tracing',
];

const root = fileURLToPath(new URL('..', import.meta.url));
await rm(`${root}dist`, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: [...PUBLIC, ...LAZY].map((name) => `src/${name}.ts`),
  outbase: 'src',
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Dependencies (zod, ajv, @babel/parser, esbuild) are the user's installed packages.
  packages: 'external',
  // No minification: names are observable (a thrown object's class name becomes
  // `exception.type`), and the tests check them.
  logLevel: 'warning',
});

// The inspector's page: one script and one style sheet, Preact included (a devDependency:
// nothing of it is installed or loaded at run time but these two files).
await build({
  absWorkingDir: root,
  entryPoints: [
    { in: 'src/inspect/ui/main.tsx', out: 'app' },
    { in: 'src/inspect/ui/app.css', out: 'app' },
  ],
  outdir: 'dist/inspect/ui',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome111', 'firefox115', 'safari16.4'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
