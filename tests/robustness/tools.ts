/** In-process twins of the robustness fixtures: open contracts in both schema kinds. */
import { z } from 'zod';
import { defineTool } from '../../packages/twylt/src/index.js';

export const META = { name: 'robust_echo', version: '1.0.0', description: 'Return the supplied value.' };

const Zod = z.object({ value: z.json().optional() });
const Json = { type: 'object', properties: { value: {} } } as const;

export const echoZod = defineTool({ ...META, inputSchema: Zod, outputSchema: Zod, biz: (input) => ({ value: input.value }) });
export const echoJson = defineTool({
  ...META,
  inputSchema: Json,
  outputSchema: Json,
  biz: (input: { value?: unknown }) => ({ value: input.value }),
});

/** A nested closed contract, to see hostile keys below the top level. */
const Nested = z.object({ point: z.object({ x: z.number(), tags: z.array(z.object({ label: z.string() })).default([]) }) });
export const nested = defineTool({ ...META, inputSchema: Nested, outputSchema: Nested, biz: (input) => input });

/** Is stdout one of the plain-text answers (help, version, brief) of a tool with META? */
export function isServiceText(stdout: string): boolean {
  const head = `${META.name} ${META.version}\n`;
  return stdout === head || stdout === `${META.version}\n` || stdout === `${META.description}\n` || stdout.startsWith(`${head}\n`);
}

/** An integer field in each schema kind, for numbers beyond 2^53. */
const Count = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } as const;
export const jsonInteger = defineTool({ ...META, inputSchema: Count, outputSchema: Count, biz: (input: { n: number }) => input });
