/** The default `requirements` of a tool that declares none (docs/bootstrap.md). */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultRequirements, markToolEntryFile, toolEntryFile } from '../../packages/twylt/src/bootstrap/default-requirements.js';
import type { TwyltError } from '../../packages/twylt/src/protocol/errors.js';

const root = mkdtempSync(join(tmpdir(), 'twylt-requirements-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function folder(name: string, manifest?: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'src', 'deep'), { recursive: true });
  if (manifest !== undefined) writeFileSync(join(dir, 'package.json'), manifest);
  return dir;
}

describe('default requirements', () => {
  it('are the dependencies of the nearest package.json, as npm-style JSON text', () => {
    const dir = folder('with-deps', JSON.stringify({ name: 'x', dependencies: { zod: '^4.0.0', twylt: '0.1.0' }, devDependencies: { vitest: '4' } }));
    expect(defaultRequirements(join(dir, 'src', 'deep', 'tool.ts'))).toEqual({
      tool: 'npm',
      format: 'package.json',
      content: '{\n  "dependencies": {\n    "zod": "^4.0.0",\n    "twylt": "0.1.0"\n  }\n}',
    });
  });

  it('stop at the nearest package.json even when it declares no dependencies', () => {
    const outer = folder('outer', JSON.stringify({ dependencies: { zod: '4' } }));
    writeFileSync(join(outer, 'src', 'package.json'), '\uFEFF{"type": "module"}');
    expect(defaultRequirements(join(outer, 'src', 'deep', 'tool.mjs')).content).toBe('{\n  "dependencies": {}\n}');
  });

  it('name the file when the nearest package.json is malformed', () => {
    const dir = folder('malformed', '{"dependencies": ');
    const failure = (toolFile: string) => {
      try {
        defaultRequirements(toolFile);
      } catch (error) {
        return (error as TwyltError).toObject();
      }
      throw new Error('no failure');
    };
    // A describe error, so the launcher and the tool's own answer fail alike (exit 4).
    expect(failure(join(dir, 'tool.ts'))).toMatchObject({
      type: 'protocol_error',
      stage: 'describe',
      exception: { type: 'InvalidPackageJson', message: expect.stringContaining(join(dir, 'package.json')) },
    });
    const wrongShape = folder('wrong-shape', '{"dependencies": ["zod"]}');
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

  it('publish a version range for a dependency installed from a path, tarball, link or git URL', () => {
    const dir = folder(
      'from-tarball',
      JSON.stringify({
        dependencies: { twylt: 'file:../packs/twylt-0.1.0.tgz', linked: 'link:../linked', fromGit: 'git+https://example.com/x.git', missing: '../nowhere', zod: '^4.1.0' },
      }),
    );
    // Installed copies: one in the project, one where Node would find it further up.
    for (const [where, name, version] of [[dir, 'twylt', '0.1.0'], [dir, 'linked', '2.3.4-beta.1'], [root, 'fromGit', '1.0.0']] as const) {
      mkdirSync(join(where, 'node_modules', name), { recursive: true });
      writeFileSync(join(where, 'node_modules', name, 'package.json'), JSON.stringify({ name, version }));
    }
    expect(JSON.parse(defaultRequirements(join(dir, 'src', 'tool.ts')).content)).toEqual({
      dependencies: { twylt: '^0.1.0', linked: '^2.3.4-beta.1', fromGit: '^1.0.0', missing: '*', zod: '^4.1.0' },
    });
  });
});
