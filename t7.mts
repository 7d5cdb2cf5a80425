import fc from 'fast-check';
import { validValue, mutate, mutation } from './tests/schema/support/arbitraries.ts';
import { probeJsonSchema } from './tests/schema/support/probes.ts';
const samples = fc.sample(fc.tuple(validValue(probeJsonSchema as any), fc.option(mutation, { freq: 3 })), { numRuns: 20, seed: 1 });
for (const [b, m] of samples) console.log(JSON.stringify(m?.kind), JSON.stringify(m === null ? b : mutate(b, m)).slice(0, 200));
