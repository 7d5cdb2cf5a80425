/** Validation never pays for JSON Schema generation: only describe needs publication. */
import { describe, expect, it, vi } from 'vitest';

const calls = vi.hoisted(() => ({ toJSONSchema: 0 }));
vi.mock('zod/v4/core', async (importOriginal) => {
  const core = await importOriginal<typeof import('zod/v4/core')>();
  return {
    ...core,
    toJSONSchema: (...args: Parameters<typeof core.toJSONSchema>) => {
      calls.toJSONSchema++;
      return core.toJSONSchema(...args);
    },
  };
});

const { ProbeInput } = await import('../../examples/probe/schemas.js');
const { adaptSchema } = await import('../../packages/twylt/src/schema/index.js');

describe('Zod adapter laziness', () => {
  it('validates without generating JSON Schema, and generates it once when asked', async () => {
    const adapter = await adaptSchema(ProbeInput, 'input');
    await adapter.validate({ name: 'a', count: 1, kind: 'probe', point: { x: 0, y: 0 } });
    await adapter.validate({ nope: true });
    expect(calls.toJSONSchema).toBe(0);
    adapter.jsonSchema();
    adapter.jsonSchema();
    expect(calls.toJSONSchema).toBe(1);
  });
});
