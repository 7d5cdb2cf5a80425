/**
 * Throwaway project folders for the launcher tests: a fixture's files plus a node_modules
 * holding exactly the packages a test asks for.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ROOT } from '../support/process.js';

export const FIXTURES = join(ROOT, 'tests/fixtures/bootstrap');
const TWYLT = join(ROOT, 'packages/twylt');

/** `node --import <tsx>` by absolute URL, so it works from any working directory. */
export const NODE_TSX = [process.execPath, '--import', pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href];
/** `node --import <tracer>`: every resolved module URL goes to the file in TWYLT_TRACE_FILE. */
export const TRACE = ['--import', pathToFileURL(join(FIXTURES, 'trace/register.mjs')).href];

export interface SandboxOptions {
  /** The fixture folder (under tests/fixtures/bootstrap) whose files are copied in. */
  fixture: string;
  /**
   * `link`: node_modules/twylt points at the workspace package (its own imports, zod
   * included, resolve from the repository). `copy`: a copy of the built package, with only
   * its declared dependencies beside it, so nothing else can be found.
   */
  twylt: 'link' | 'copy';
  zod?: boolean;
  /** Install the fixture's business dependency, bootstrap-fixture-dep. */
  dependency?: boolean;
}

export interface Sandbox {
  dir: string;
  remove(): void;
}

export function sandbox(options: SandboxOptions): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'twylt-bootstrap-'));
  cpSync(join(FIXTURES, options.fixture), dir, { recursive: true });
  const modules = join(dir, 'node_modules');
  mkdirSync(modules);
  if (options.twylt === 'link') {
    symlinkSync(TWYLT, join(modules, 'twylt'), 'dir');
  } else {
    cpSync(join(TWYLT, 'package.json'), join(modules, 'twylt/package.json'));
    cpSync(join(TWYLT, 'dist'), join(modules, 'twylt/dist'), { recursive: true });
    const manifest = JSON.parse(readFileSync(join(TWYLT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const name of Object.keys(manifest.dependencies ?? {})) linkFromRoot(modules, name);
  }
  if (options.zod) linkFromRoot(modules, 'zod');
  if (options.dependency) cpSync(join(FIXTURES, 'dep-package'), join(modules, 'bootstrap-fixture-dep'), { recursive: true });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

function linkFromRoot(modules: string, name: string): void {
  const target = join(modules, name);
  mkdirSync(join(target, '..'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules', name), target, 'dir');
}

/** The module URLs a traced process resolved. */
export function traced(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * The twylt source modules (`tool/run.ts`, ...) inside the built package files a traced
 * process loaded. dist/ is bundled (ADR 0005), so a file may hold several modules; esbuild
 * heads each one with a `// src/<path>.ts` line, which is what this reads.
 */
export function loadedSourceModules(urls: string[]): string[] {
  const files = [...new Set(urls.filter((url) => url.startsWith('file:') && url.includes('/twylt/dist/')))];
  const modules = files.flatMap((url) => [...readFileSync(fileURLToPath(url), 'utf8').matchAll(/^\/\/ src\/(\S+\.ts)$/gm)].map((m) => m[1]!));
  return [...new Set(modules)].sort();
}
