/** Static reading of a tool's metadata (docs/bootstrap.md, "What is read statically"). */
import { describe, expect, it } from 'vitest';
import { extractMetadata, readToolMetadata } from '../../packages/twylt/src/bootstrap/extract.js';
import { ROOT } from '../support/process.js';

const FIXTURES = `${ROOT}tests/fixtures/bootstrap/`;

async function read(source: string, file = 'tool.ts') {
  return extractMetadata(source, `/virtual/${file}`);
}

const CLASS_TOOL = `
import { z } from 'zod';
import { Tool } from 'twylt';
class Point { name = 'decoy'; version = '9.9.9'; }
export class Lister extends Tool {
  inputSchema = z.object({});
  outputSchema = z.object({});
  name = 'lister';
  version = '1.2.3';
  description = \`Lists things\`;
  requirements = { tool: 'npm', format: 'package.json', content: '{}' };
  fewShots = [{ input: { n: -1, on: true, none: null }, output: { items: ['a', 2.5] } }];
  inputSchemaName = 'ListerInput';
  inputSchemaVersion = '1';
  outputSchemaName = 'ListerOutput';
  outputSchemaVersion = '2';
  biz() { return {}; }
}
Lister.run();
`;

const EXPECTED = {
  name: 'lister',
  version: '1.2.3',
  description: 'Lists things',
  requirements: { tool: 'npm', format: 'package.json', content: '{}' },
  fewShots: [{ input: { n: -1, on: true, none: null }, output: { items: ['a', 2.5] } }],
  inputSchemaName: 'ListerInput',
  inputSchemaVersion: '1',
  outputSchemaName: 'ListerOutput',
  outputSchemaVersion: '2',
};

describe('static extraction', () => {
  it('reads every metadata field of a Tool class, and only of the tool (not a data model declared first)', async () => {
    const metadata = await read(CLASS_TOOL);
    expect(metadata.found).toBe(true);
    expect(metadata.values).toEqual(EXPECTED);
    expect(metadata.notes).toEqual([]);
  });

  it('parses .ts, .mts, .js and .mjs; TypeScript syntax only where the extension allows it', async () => {
    const javascript = CLASS_TOOL.replace("import { z } from 'zod';", '');
    for (const file of ['tool.ts', 'tool.mts', 'tool.js', 'tool.mjs']) {
      expect((await read(javascript, file)).values, file).toEqual(EXPECTED);
    }
    const typed = CLASS_TOOL.replace("name = 'lister';", "name: string = 'lister' as const;");
    expect((await read(typed, 'tool.mts')).values.name).toBe('lister');
    const rejected = await read(typed, 'tool.mjs');
    expect(rejected.found).toBe(false);
    expect(rejected.notes[0]).toMatch(/^\/virtual\/tool\.mjs: cannot be parsed/);
  });

  it('accepts the syntax Node 20 and TypeScript 5 accept: decorators, accessors, import attributes', async () => {
    const source = `import { Tool } from 'twylt';
import data from './data.json' with { type: 'json' };
@register
export class T extends Tool { @field name = 'decorated'; accessor version = '1'; }`;
    for (const file of ['tool.ts', 'tool.mjs']) {
      const metadata = await read(source, file);
      expect(metadata.values, file).toEqual({ name: 'decorated' });
      expect(metadata.notes).toEqual([`/virtual/${file}:4:58: version is declared as an accessor, which is not read; only instance fields with literal values are`]);
    }
  });

  it('reads the object literal given to defineTool, bound to a variable or run directly', async () => {
    const bound = `
      import { defineTool } from 'twylt';
      const tool = defineTool({ name: 'd', version: '0.1.0', biz: (x) => x, description: 'D' });
      tool.run();`;
    expect((await read(bound, 'tool.js')).values).toEqual({ name: 'd', version: '0.1.0', description: 'D' });
    const direct = `import { defineTool as define } from 'twylt';\ndefine({ name: 'direct' } satisfies object).run();`;
    expect((await read(direct, 'tool.ts')).values).toEqual({ name: 'direct' });
    const exported = `import { defineTool } from 'twylt';
      const helper = defineTool({ name: 'helper' });
      export const main = defineTool({ name: 'main' });
      export default defineTool({ name: 'default' });`;
    const metadata = await read(exported, 'tool.mjs');
    expect(metadata.values).toEqual({ name: 'main' });
    expect(metadata.notes).toEqual(['/virtual/tool.mjs:4:22: 2 tools found; reading the first, defineTool(...)']);
  });

  it("recognises Tool through a renamed or namespace import from 'twylt' only", async () => {
    const renamed = `import { Tool as Base } from 'twylt'; class T extends Base { name = 'renamed'; } T.run();`;
    expect((await read(renamed)).values.name).toBe('renamed');
    const namespace = `import * as twylt from 'twylt'; export default class extends twylt.Tool { name = 'ns'; }`;
    expect((await read(namespace)).values.name).toBe('ns');
    const elsewhere = `import { Tool } from './my-tool.js'; class T extends Tool { name = 'other'; } T.run();`;
    const other = await read(elsewhere);
    expect(other.found).toBe(false);
    expect(other.notes).toEqual(["/virtual/tool.ts:1:1: no tool found: no class extends Tool from 'twylt' and no defineTool(...) call"]);
  });

  it('follows a chain of classes in the file; the subclass overrides its base', async () => {
    const source = `
      import { Tool } from 'twylt';
      abstract class Base extends Tool { version = '1.0.0'; description = 'base'; }
      class Real extends Base { name = 'real'; description = 'real one'; }
      Real.run();`;
    expect((await read(source)).values).toEqual({ version: '1.0.0', description: 'real one', name: 'real' });
  });

  it('prefers the tool whose run() is called, then an exported one, then the most derived class', async () => {
    const run = `import { Tool } from 'twylt';
      export class A extends Tool { get name() { return 'a'; } }
      class B extends Tool { name = 'b'; }
      B.run();`;
    expect(await read(run)).toMatchObject({ values: { name: 'b' }, notes: [] }); // nothing said about A
    const exported = `import { Tool } from 'twylt';
      class A extends Tool { name = 'a'; }
      class B extends Tool { name = 'b'; }
      export { B };`;
    expect((await read(exported)).values.name).toBe('b');
    const tie = `import { Tool } from 'twylt';
      class A extends Tool { name = 'a'; }
      class B extends Tool { name = 'b'; }`;
    const metadata = await read(tie);
    expect(metadata.values.name).toBe('a');
    expect(metadata.notes).toEqual(['/virtual/tool.ts:3:7: 2 tools found; reading the first, class A']);
  });

  it('leaves non-literal values out and says where and why', async () => {
    const source = `import { Tool } from 'twylt';
const VERSION = '1.0.0';
class T extends Tool {
  name = 'n';
  version = VERSION;
  description = \`v\${VERSION}\`;
  fewShots = [...[]];
  requirements = { tool: 'npm', format: 'package.json', content: read() };
  get inputSchemaName() { return 'In'; }
  static outputSchemaName = 'Out';
}
T.run();`;
    const metadata = await read(source);
    expect(metadata.values).toEqual({ name: 'n' });
    expect([...metadata.unreadable].sort()).toEqual(['description', 'fewShots', 'inputSchemaName', 'requirements', 'version']);
    expect(metadata.notes).toEqual([
      '/virtual/tool.ts:9:3: inputSchemaName is declared as a getter, which is not read; only instance fields with literal values are',
      '/virtual/tool.ts:10:3: outputSchemaName is declared as a static member, which is not read; only instance fields with literal values are',
      '/virtual/tool.ts:5:13: version of class T is not a literal (the identifier `VERSION`)',
      '/virtual/tool.ts:6:17: description of class T is not a literal (a template string with substitutions)',
      '/virtual/tool.ts:7:15: fewShots of class T is not a literal (a spread)',
      '/virtual/tool.ts:8:66: requirements of class T is not a literal (a call)',
    ]);
  });

  it('reports what a defineTool call hides from static reading', async () => {
    const spread = `import { defineTool } from 'twylt';\nconst base = { name: 'x' };\ndefineTool({ ...base, version: '1.0.0', description() { return ''; } }).run();`;
    const metadata = await read(spread, 'tool.mjs');
    expect(metadata.values).toEqual({ version: '1.0.0' });
    expect(metadata.notes).toEqual([
      '/virtual/tool.mjs:3:14: fields inside a spread are not read',
      '/virtual/tool.mjs:3:41: description is declared as a method, which is not read',
    ]);
    const indirect = await read(`import { defineTool } from 'twylt';\nconst spec = {};\ndefineTool(spec).run();`, 'tool.js');
    expect(indirect).toMatchObject({ found: true, values: {} });
    expect(indirect.notes).toEqual(['/virtual/tool.js:3:12: defineTool is not given an object literal, so no field is read']);
  });

  it('keeps literal forms exact: computed keys, __proto__ and holes are not literals', async () => {
    const tool = (value: string) => `import { Tool } from 'twylt';\nclass T extends Tool { fewShots = ${value}; }\nT.run();`;
    expect((await read(tool("[{ 'input': {}, \"output\": { 1: 'x' } }]"))).values.fewShots).toEqual([{ input: {}, output: { 1: 'x' } }]);
    for (const value of ["[{ ['input']: {} }]", '[{ __proto__: {} }]', '[, 1]', '[1n]', '[undefined]', '[+"1"]']) {
      expect((await read(tool(value))).unreadable.has('fewShots'), value).toBe(true);
    }
  });

  it('reads a real fixture file from disk, ignoring its decoy data model', async () => {
    const metadata = await readToolMetadata(`${FIXTURES}needs-dep/tool.ts`);
    expect(metadata.values.name).toBe('shout');
    expect(metadata.values.version).toBe('2.1.0');
    await expect(readToolMetadata(`${FIXTURES}nowhere/tool.ts`)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
