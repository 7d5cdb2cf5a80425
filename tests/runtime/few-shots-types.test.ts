/**
 * The types of few-shots, checked by the TypeScript compiler on real files: a class tool's
 * few-shot with an enum value needs no `as const` (a subclass field is typed from its
 * initializer alone, so its literal types are widened), `as const` arrays are accepted too,
 * and what is wrong (a field's primitive type, a missing field, a misspelled key in
 * defineTool) still fails to compile.
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/process.js';

const dir = mkdtempSync(join(tmpdir(), 'twylt-few-shots-types-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
writeFileSync(join(dir, 'package.json'), '{"type": "module"}');

const HEADER = `import * as z from 'zod';
import { Tool, defineTool } from 'twylt';
const Input = z.object({ text: z.string(), mode: z.enum(['upper', 'lower']) });
const Output = z.object({ text: z.string() });
`;

function tool(name: string, fewShots: string, form: 'class' | 'defineTool' = 'class'): string {
  const body = form === 'class'
    ? `export class T extends Tool<typeof Input, typeof Output> {
  inputSchema = Input;
  outputSchema = Output;
  fewShots = ${fewShots};
  biz(data: z.infer<typeof Input>) { return { text: data.text }; }
}\n`
    : `export const t = defineTool({ inputSchema: Input, outputSchema: Output, fewShots: ${fewShots}, biz: (data) => ({ text: data.text }) });\n`;
  writeFileSync(join(dir, `${name}.ts`), HEADER + body);
  return `${name}.ts`;
}

/** tsc's errors for the files, '' when they compile (one tsc run: each costs seconds). */
async function compile(...files: string[]): Promise<string> {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const options = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--skipLibCheck'];
  const result = await run([process.execPath, tsc, ...options, ...files], { cwd: dir, timeoutMs: 120_000 });
  return result.code === 0 ? '' : result.stdout;
}

describe('few-shot types', () => {
  it('an enum value in a class tool compiles without as const, and with it', async () => {
    const shot = "{ input: { text: 'a', mode: 'upper' }, output: { text: 'A' } }";
    expect(await compile(tool('plain', `[${shot}]`), tool('const-array', `[${shot}] as const`), tool('define-const-array', `[${shot}] as const`, 'defineTool'))).toBe('');
  }, 150_000);

  it('a wrong type, a missing field or a misspelled key is still an error', async () => {
    const errors = await compile(
      tool('wrong-type', "[{ input: { text: 'a', mode: 1 }, output: { text: 'A' } }]"),
      tool('missing-field', "[{ input: { mode: 'upper' }, output: { text: 'A' } }]"),
      // defineTool types its argument from the schemas: enum values are checked there.
      tool('define-enum', "[{ input: { text: 'a', mode: 'uper' }, output: { text: 'A' } }]", 'defineTool'),
      tool('define-key', "[{ input: { text: 'a', mode: 'upper' }, output: { txt: 'A' } }]", 'defineTool'),
    );
    expect(errors).toMatch(/^wrong-type\.ts\(8,3\): error TS2416/m);
    expect(errors).toMatch(/^missing-field\.ts\(8,3\): error TS2416/m);
    expect(errors).toMatch(/^define-enum\.ts\(5,\d+\): error TS2820: Type '"uper"'/m);
    expect(errors).toMatch(/^define-key\.ts\(5,\d+\): error TS2561: .*'txt'/m);
  }, 150_000);
});
