/**
 * Run as a child process: adapts one kind of schema through the schema layer's entry, then
 * reports which schema libraries ended up loaded (Zod announces itself on globalThis).
 */
import { adaptSchema, publishSchema } from '../../../packages/twylt/src/schema/index.js';

const kind = process.argv[2];
const schema =
  kind === 'zod'
    ? (await import('zod')).z.object({ a: (await import('zod')).z.string() })
    : { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
const zodBefore = '__zod_globalRegistry' in globalThis;
const adapter = await adaptSchema(schema, 'input');
const result = await adapter.validate({ a: 'x' });
publishSchema(adapter, { name: 'A' });
process.stdout.write(JSON.stringify({ ok: result.ok, zodBefore, zodAfter: '__zod_globalRegistry' in globalThis }));
