/**
 * The default `requirements` of a tool that declares none: the packages its own code imports
 * (docs/bootstrap.md, ADR 0037), read from real files in a throwaway project.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultRequirements, markToolEntryFile, toolEntryFile } from '../../packages/twylt/src/requirements/default-requirements.js';
import { hasModuleSyntax, importsOf } from '../../packages/twylt/src/requirements/imports.js';
import type { TwyltError } from '../../packages/twylt/src/protocol/errors.js';

const root = mkdtempSync(join(tmpdir(), 'twylt-requirements-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Writes `files` (path -> text) under a new project folder; a `pkg@1.2.3` key installs that package. */
function project(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [path, text] of Object.entries(files)) {
    const installed = /^(.+)@(\d[^/]*)$/.exec(path);
    const file = installed ? join(dir, 'node_modules', installed[1]!, 'package.json') : join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, installed ? JSON.stringify({ name: installed[1], version: installed[2] }) : text);
  }
  return dir;
}

const dependencies = (toolFile: string) => JSON.parse(defaultRequirements(toolFile).content).dependencies as Record<string, string>;

describe('default requirements', () => {
  it('are the packages the tool imports, not every dependency of its package.json', () => {
    const dir = project('slugify-only', {
      'package.json': JSON.stringify({ type: 'module', dependencies: { slugify: '^1.6.0', yaml: '^2.0.0', 'twylt-ai': '0.1.0', 'twylt-mcp': '0.1.0', twylt: '0.1.0' } }),
      'slugify@1.6.6': '',
      'yaml@2.8.0': '',
      'tools/slug/tool.ts': "import slugify from 'slugify';\nimport { Tool } from 'twylt';\nimport { readFile } from 'node:fs/promises';\nimport path from 'path';\n",
    });
    expect(defaultRequirements(join(dir, 'tools/slug/tool.ts'))).toEqual({
      tool: 'npm',
      format: 'package.json',
      // Installed: its version; not installed: the declared range.
      content: '{\n  "dependencies": {\n    "slugify": "^1.6.6",\n    "twylt": "0.1.0"\n  }\n}',
    });
  });

  it("follow the tool's own files (relative imports, TypeScript names for .js), never into node_modules", () => {
    const dir = project('graph', {
      'package.json': '{}',
      'zod@4.1.0': '',
      '@scope/kit@2.0.0': '',
      'node_modules/deep/index.js': "import 'never-followed';",
      'tool.ts': "import { helper } from './lib/helper.js';\nexport * from './lib';\nconst lazy = () => import('./lazy.mjs');\nimport '../graph/node_modules/deep/index.js';\n",
      'lib/helper.ts': "import { z } from 'zod/v4';\nimport type { Shape } from 'types-only';\nexport { type Other } from 'also-types';\n",
      'lib/index.ts': "export { kit } from '@scope/kit/sub/path';\n",
      'lazy.mjs': "const { createRequire } = await import('node:module');\nconst cjs = require('left-pad');\nimport('./tool.ts');\n",
    });
    expect(dependencies(join(dir, 'tool.ts'))).toEqual({ '@scope/kit': '^2.0.0', 'left-pad': '*', zod: '^4.1.0' });
  });

  it('resolve each version from the file that imports it, as Node would', () => {
    const dir = project('nearest-install', {
      'package.json': '{}',
      'zod@3.0.0': '',
      'shared/node_modules/zod/package.json': JSON.stringify({ version: '4.2.0' }),
      'tools/tool.js': "import '../shared/util.js';",
      'shared/util.js': "import 'zod';",
    });
    expect(dependencies(join(dir, 'tools/tool.js'))).toEqual({ zod: '^4.2.0' });
  });

  it('are {} for a tool file that imports nothing, or cannot be found', () => {
    const dir = project('nothing', { 'package.json': JSON.stringify({ dependencies: { zod: '4' } }), 'tool.mjs': "import fs from 'node:fs';" });
    expect(dependencies(join(dir, 'tool.mjs'))).toEqual({});
    expect(dependencies(join(dir, 'missing.mjs'))).toEqual({});
    expect(defaultRequirements(undefined).content).toBe('{\n  "dependencies": {}\n}');
  });

  it('publish a range for a package that is not installed, and * for one installed from a path, link or git URL', () => {
    const dir = project('ranges', {
      'package.json': JSON.stringify({
        dependencies: { twylt: 'file:../packs/twylt-0.1.0.tgz', fromGit: 'git+https://example.com/x.git', zod: '^4.1.0' },
        devDependencies: { vitest: '4.0.0' },
        peerDependencies: { peer: '>=2' },
      }),
      'src/tool.ts': "import 'twylt';\nimport 'fromGit';\nimport 'zod';\nimport 'vitest';\nimport 'peer';\nimport 'undeclared';\n",
    });
    expect(dependencies(join(dir, 'src/tool.ts'))).toEqual({ fromGit: '*', peer: '>=2', twylt: '*', undeclared: '*', vitest: '4.0.0', zod: '^4.1.0' });
  });

  it('name the file when the nearest package.json is malformed', () => {
    const failure = (toolFile: string) => {
      try {
        defaultRequirements(toolFile);
      } catch (error) {
        return (error as TwyltError).toObject();
      }
      throw new Error('no failure');
    };
    const dir = project('malformed', { 'package.json': '{"dependencies": ', 'tool.ts': "import 'zod';" });
    // A describe error, so the launcher and the tool's own answer fail alike (exit 4).
    expect(failure(join(dir, 'tool.ts'))).toMatchObject({
      type: 'protocol_error',
      stage: 'describe',
      exception: { type: 'InvalidPackageJson', message: expect.stringContaining(join(dir, 'package.json')) },
    });
    const wrongShape = project('wrong-shape', { 'package.json': '{"dependencies": ["zod"]}', 'tool.ts': "import 'zod';" });
    expect(failure(join(wrongShape, 'tool.ts')).exception).toEqual({
      type: 'InvalidPackageJson',
      message: `"dependencies" in ${join(wrongShape, 'package.json')} must map package names to version strings`,
    });
  });

  it('the tool entry file is the one a launcher marked, else the main script', () => {
    expect(toolEntryFile()).toBe(process.argv[1]);
    markToolEntryFile('/somewhere/tool.ts');
    expect(toolEntryFile()).toBe('/somewhere/tool.ts');
  });
});

describe('the imports of one source', () => {
  const specifiers = (source: string) => importsOf(source).map(({ specifier, typeOnly }) => (typeOnly ? `type:${specifier}` : specifier));

  it('static, dynamic, re-exports and require; type-only imports marked', () => {
    const source = [
      "import a from 'a';",
      "import type { T } from 't';",
      "import { type U, type V as W } from 'u';",
      "import { type, x } from 'mixed';",
      "import type from 'default-named-type';",
      "import * as ns from '@scope/ns/sub';",
      "import 'side-effect';",
      "export * from 'star';",
      "export type { Q } from 'q';",
      "export { r } from 'r';",
      'export { local };',
      "const c = require('cjs'); const d = import(\"dyn\"); const e = import(`tpl`, { with: { type: 'json' } });",
      "import eq = require('ts-eq');",
    ].join('\n');
    expect(specifiers(source)).toEqual(['a', 'type:t', 'type:u', 'mixed', 'default-named-type', '@scope/ns/sub', 'side-effect', 'star', 'type:q', 'r', 'cjs', 'dyn', 'tpl', 'ts-eq']);
  });

  it('not in comments, strings, template text or regular expressions; not a property named import or require', () => {
    const source = [
      "// import 'line-comment'",
      "/* require('block-comment') */",
      'const s = "import \'in-string\'";',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: source text for the lexer, not a template
      "const t = `require('in-template') ${await import('in-substitution')} import 'after'`;",
      "const re = /import 'in-regexp' [/]/g; const half = 4 / 2; const third = half / 3 / 1;",
      "if (re.test('x')) { throw /'/; }",
      "obj.require('property'); obj.import('property'); const u = import.meta.url;",
      "import last from 'last';",
    ].join('\n');
    expect(specifiers(source)).toEqual(['in-substitution', 'last']);
  });
});

describe('module syntax, which makes a .ts file without a package type an ES module (ADR 0035)', () => {
  it('a static import or export, or import.meta', () => {
    for (const source of ["import { Tool } from 'twylt';", "import 'side-effect';", 'export const a = 1;', 'export { a };', 'const here = import.meta.url;']) {
      expect(hasModuleSyntax(`const x: number = 1;\n${source}`), source).toBe(true);
    }
  });

  it('not require, a dynamic import, TypeScript’s CommonJS forms, properties, comments or strings', () => {
    const source = [
      "const { sep } = require('node:path');",
      "const later = await import('dyn');",
      "import eq = require('ts-eq');",
      'export = sep;',
      "obj.import('x'); obj.export = 1; const o = { import: 1, export: 2 };",
      "// import 'comment'",
      'const s = "export const x = 1";',
      'module.exports = { sep };',
    ].join('\n');
    expect(hasModuleSyntax(source)).toBe(false);
  });
});
