/**
 * One output bound for every consumer: the client alone, a tool set (twylt-mcp, twylt-ai,
 * twylt inspect) and the checker stop a flooding tool at the same size.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_OUTPUT_BYTES, OutputTooLargeError, TwyltClient } from '../../packages/twylt/src/client/index.js';
import { DEFAULT_MAX_OUTPUT_BYTES as TOOLSET_DEFAULT, createRunner } from '../../packages/twylt/src/toolset/index.js';

const misbehave = fileURLToPath(new URL('./fixtures/misbehave.mjs', import.meta.url));
const FOUR_MIB = 4 * 1024 * 1024;

describe('the default output bound', () => {
  it('is 4 MiB, one constant for the client and the tool sets', () => {
    expect(DEFAULT_MAX_OUTPUT_BYTES).toBe(FOUR_MIB);
    expect(TOOLSET_DEFAULT).toBe(DEFAULT_MAX_OUTPUT_BYTES);
  });

  it('stops a flooding tool at 4 MiB through the client and through a tool-set runner alike', async () => {
    const env = { MISBEHAVE: 'flood' };
    const direct = await new TwyltClient([process.execPath, misbehave], { env }).call({}).catch((e: unknown) => e);
    const viaRunner = await createRunner({ command: [process.execPath, misbehave], env }).call({}).catch((e: unknown) => e);
    for (const error of [direct, viaRunner]) {
      expect(error).toBeInstanceOf(OutputTooLargeError);
      expect((error as OutputTooLargeError).limit).toBe(FOUR_MIB);
    }
  });
});
