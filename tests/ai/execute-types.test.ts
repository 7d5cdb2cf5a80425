/**
 * twylt-ai's types under both `ai` majors (issue 30, item 16): the TypeScript compiler, run
 * on a small program in a project of its own whose `ai` is ai 6 or ai 7 (the aliased
 * devDependency `ai-7`), for twylt-ai's declarations and the program alike. A tool's
 * `execute` called directly with `{ toolCallId, messages }` (ai 7's own options also want a
 * `context`), with no options, or with an abort signal; a tool set passed to
 * `generateText`; the example of docs/ai-sdk.md as written. A wrong call beside them must
 * fail, so the check is no no-op.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blocksUnder, fileName, readDoc } from '../docs/markdown.js';
import { ROOT, run } from '../support/process.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-ai-types-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const GOOD = `import { generateText, type LanguageModel, type ToolSet } from 'ai';
import { twyltTool, twyltTools, type TwyltExecuteOptions } from 'twylt-ai';

const tool = await twyltTool(['python3', 'tools/echo/tool.py']);
const direct: unknown = await tool.execute({ text: 'hi' }, { toolCallId: 'call-1', messages: [] });
const bare: unknown = await tool.execute({ text: 'hi' });
const options: TwyltExecuteOptions = { abortSignal: new AbortController().signal };
const stoppable: unknown = await tool.execute({ text: 'hi' }, options);

const tools = await twyltTools([['python3', 'tools/echo/tool.py']]);
const set: ToolSet = tools;
declare const model: LanguageModel;
await generateText({ model, tools, prompt: 'Echo hi.' });
await tools.echo!.execute({ text: 'hi' }, { toolCallId: 'call-2', messages: [], abortSignal: options.abortSignal });
console.log(direct, bare, stoppable, set);
`;

/** docs/ai-sdk.md's own example, as written. */
const [DOC] = blocksUnder(readDoc('docs/ai-sdk.md'), 'Calling `execute` yourself', 'ts');

const BAD = `import { twyltTool } from 'twylt-ai';

const tool = await twyltTool(['python3', 'tools/echo/tool.py']);
await tool.execute('not an object');
`;

/** tsc on good.ts and bad.ts, with `ai` resolved to `alias` (ai or ai-7) for every file that imports it. */
async function typecheck(alias: 'ai' | 'ai-7') {
  const dir = join(scratch, alias);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(join(dir, 'good.ts'), GOOD);
  writeFileSync(join(dir, 'bad.ts'), BAD);
  writeFileSync(join(dir, 'call-directly.ts'), DOC!.body);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')],
        // A path to the file: NodeNext maps no folder here.
        paths: { ai: [join(ROOT, 'node_modules', alias, 'dist/index.d.ts')], 'twylt-ai': [join(ROOT, 'packages/twylt-ai/dist/index.d.ts')] },
      },
      files: ['good.ts', 'bad.ts', 'call-directly.ts'],
    }),
  );
  const result = await run([process.execPath, join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir, '--listFiles'], { cwd: dir, timeoutMs: 120_000 });
  const lines = result.stdout.split('\n');
  return { code: result.code, files: lines.filter((line) => line.startsWith('/')), errors: lines.filter((line) => /error TS\d+/.test(line)), output: result.stdout + result.stderr };
}

it('docs/ai-sdk.md has the example, as call-directly.ts', () => {
  expect(DOC && fileName(DOC)).toBe('call-directly.ts');
});

describe.each(['ai', 'ai-7'] as const)('twylt-ai with %s', (alias) => {
  it('execute(input, { toolCallId, messages }), execute(input), the docs example and a tool set for generateText type-check; a wrong call does not', async () => {
    const checked = await typecheck(alias);
    // The major meant, and no other, was the one checked against.
    expect(checked.files).toContain(join(ROOT, 'node_modules', alias, 'dist/index.d.ts'));
    expect(checked.files).not.toContain(join(ROOT, 'node_modules', alias === 'ai' ? 'ai-7' : 'ai', 'dist/index.d.ts'));
    expect(checked.errors, checked.output).toHaveLength(1);
    expect(checked.errors[0]).toMatch(/^bad\.ts\(4,\d+\): error TS2345: Argument of type 'string' is not assignable to parameter of type 'Record<string, unknown>'/);
    expect(checked.code).not.toBe(0);
  }, 180_000);
});
