/**
 * Which declared range a tool's default requirements publish when a package is declared
 * under several kinds of dependency (issue 34: a reversed order went unnoticed): the kind
 * an install of the project gets wins, `dependencies` over `optionalDependencies` over
 * `peerDependencies` over `devDependencies`. Nothing is installed, so the declared ranges
 * are what is published.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultRequirements } from '../../packages/twylt/src/requirements/default-requirements.js';

const root = mkdtempSync(join(tmpdir(), 'twylt-requirement-kinds-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A package declared by exactly the kinds given, its range naming the kind. */
const KIND_SETS: Record<string, string[]> = {
  all: ['devDependencies', 'peerDependencies', 'optionalDependencies', 'dependencies'],
  'no-dependencies': ['devDependencies', 'peerDependencies', 'optionalDependencies'],
  'dev-and-peer': ['devDependencies', 'peerDependencies'],
  'dev-only': ['devDependencies'],
  'peer-and-optional': ['peerDependencies', 'optionalDependencies'],
  'dev-and-dependencies': ['devDependencies', 'dependencies'],
};
const RANGE: Record<string, string> = { dependencies: '^4.0.0', optionalDependencies: '^3.0.0', peerDependencies: '^2.0.0', devDependencies: '^1.0.0' };

describe('default requirements of a package declared under several kinds', () => {
  it('publish the range of the kind an install gets: dependencies, then optional, then peer, then dev', () => {
    const manifest: Record<string, Record<string, string>> = {};
    for (const [name, kinds] of Object.entries(KIND_SETS)) {
      // Written in every order a mistake could depend on: the kinds' order in the file is not the rule.
      for (const kind of [...kinds].reverse()) (manifest[kind] ??= {})[name] = RANGE[kind]!;
    }
    mkdirSync(join(root, 'tool'), { recursive: true });
    writeFileSync(join(root, 'package.json'), JSON.stringify(manifest));
    writeFileSync(join(root, 'tool', 'tool.mjs'), Object.keys(KIND_SETS).map((name) => `import '${name}';`).join('\n'));
    const published = JSON.parse(defaultRequirements(join(root, 'tool', 'tool.mjs')).content).dependencies;
    expect(published).toEqual({
      all: RANGE.dependencies,
      'no-dependencies': RANGE.optionalDependencies,
      'dev-and-peer': RANGE.peerDependencies,
      'dev-only': RANGE.devDependencies,
      'peer-and-optional': RANGE.optionalDependencies,
      'dev-and-dependencies': RANGE.dependencies,
    });
  });
});
