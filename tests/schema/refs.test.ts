/**
 * One `$ref` resolver: what the validator enforces (resolveRef) and what the conformance
 * checker and `twylt describe` read (deref) name the same schema for the same reference, as
 * JSON Schema 2020-12 defines it: `#` or a JSON pointer in a URI fragment (`~1`, `~0`,
 * percent-escapes, array indexes), own keys only.
 */
import { describe, expect, it } from 'vitest';
import { deref } from '../../packages/twylt/src/conformance/schema-walk.js';
import { SchemaError } from '../../packages/twylt/src/schema/errors.js';
import { resolveRef } from '../../packages/twylt/src/schema/json-schema-subset.js';

const root = {
  type: 'object',
  $defs: { 'a/b': { type: 'string' }, 'a b': { type: 'integer' }, 'x~y': { type: 'number' } },
  prefixItems: [{ type: 'null' }, { type: 'boolean' }],
};

describe('$ref resolution, shared by the validator and the checker', () => {
  it.each([
    ['#/$defs/a~1b', 'string'],
    ['#/$defs/a%20b', 'integer'],
    ['#/$defs/x~0y', 'number'],
    ['#/prefixItems/1', 'boolean'],
    ['#', 'object'],
  ])('%s names the same schema for both', (ref, type) => {
    expect((resolveRef(root, ref) as { type: string }).type).toBe(type);
    expect(deref({ $ref: ref }, root).type).toBe(type);
  });

  it.each([
    ['a lone percent sign', '#/$defs/%'],
    ['an inherited key', '#/$defs/constructor'],
    ['the prototype', '#/__proto__'],
    ['an anchor, not a pointer', '#$defs'],
    ['an index with a leading zero', '#/prefixItems/01'],
    ['a missing key', '#/$defs/missing'],
  ])('%s names nothing: the validator refuses it, the checker leaves it unresolved', (_what, ref) => {
    expect(() => resolveRef(root, ref)).toThrow(SchemaError);
    expect(deref({ $ref: ref }, root)).toEqual({ $ref: ref });
  });

  it('keeps the keywords beside a $ref when the checker reads a field', () => {
    expect(deref({ $ref: '#/$defs/a~1b', description: 'a name' }, root)).toEqual({ type: 'string', description: 'a name' });
  });
});
