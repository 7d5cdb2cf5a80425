/**
 * A package made by a test (twylt-test-lazy-pad) and TypeScript tools that declare it but
 * import it only when called: they describe whether it is installed or not (issue 36).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PACKAGE = 'twylt-test-lazy-pad';

/** A package `twylt-test-lazy-pad` at `version` in `at` (its folder), exporting pad(). */
export function writePackage(at: string, version: string): void {
  mkdirSync(at, { recursive: true });
  writeFileSync(join(at, 'package.json'), JSON.stringify({ name: PACKAGE, version, type: 'module', main: 'index.js' }));
  writeFileSync(join(at, 'index.js'), `export const pad = (text, width) => text.padStart(width, '.');\nexport const version = ${JSON.stringify(version)};\n`);
}

/** A TypeScript tool in `folder` declaring `range` of the package and importing it only when called. */
export function writeTool(folder: string, name: string, range: string): void {
  mkdirSync(folder, { recursive: true });
  const requirements = { tool: 'npm', format: 'package.json', content: JSON.stringify({ dependencies: { [PACKAGE]: range } }) };
  writeFileSync(
    join(folder, 'tool.ts'),
    `import { defineTool } from 'twylt';

defineTool({
  name: ${JSON.stringify(name)},
  version: '0.1.0',
  description: 'Pad a text on the left.',
  requirements: ${JSON.stringify(requirements)},
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  outputSchema: { type: 'object', properties: { padded: { type: 'string' }, version: { type: 'string' } }, required: ['padded', 'version'], additionalProperties: false },
  biz: async (data: { text: string }) => {
    const { pad, version } = await import(${JSON.stringify(PACKAGE)}); // imported lazily: the describe never needs it
    return { padded: pad(data.text, 8), version };
  },
}).run();
`,
  );
}


/** A pack in `dir`/`name` with one tool, pad, declaring the package as a `file:` tarball made here (installable offline). */
export function lazyPack(dir: string, name: string): { pack: string; tarball: string } {
  writePackage(join(dir, `${name}-source`), '1.0.0');
  const tarball = join(dir, execFileSync('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: join(dir, `${name}-source`), encoding: 'utf8' }).trim());
  const pack = join(dir, name);
  writeTool(join(pack, 'tools', 'pad'), 'pad', `file:${tarball}`);
  return { pack, tarball };
}
