/**
 * JSON Schema validation with Ajv, loaded only when someone asks for it: a plain call
 * never pays for it. The draft is taken from `$schema`; no `$schema` means 2020-12. Patterns
 * are matched in linear time, within a budget per validation (linear-regexp.ts).
 */
import type { JsonSchema } from './types.js';
import type { SchemaIssue } from './errors.js';
import { linearRegExp, PatternBudgetExceeded, resetPatternBudget } from './linear-regexp.js';
import { ajvIssues, type AjvError } from './schema-messages.js';

export type SchemaValidator = (value: unknown) => SchemaIssue[];

interface AjvLike {
  compile(schema: object): AjvValidate;
}
interface AjvValidate {
  (value: unknown): boolean;
  errors?: AjvError[] | null;
}
type Draft = '07' | '2019' | '2020';

const engines = new Map<Draft, Promise<AjvLike>>();
const compiled = new WeakMap<object, SchemaValidator>();

function draftOf(schema: JsonSchema): Draft {
  const uri = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (/draft-0[4-7]/.test(uri)) return '07';
  if (uri.includes('2019-09')) return '2019';
  return '2020';
}

function engine(draft: Draft): Promise<AjvLike> {
  let found = engines.get(draft);
  if (!found) {
    found = (async () => {
      const [module, re2] = await Promise.all([
        draft === '07' ? import('ajv') : draft === '2019' ? import('ajv/dist/2019.js') : import('ajv/dist/2020.js'),
        import('re2js'),
      ]);
      // Patterns run in linear time: a checked value must not be able to stall the process.
      // `verbose` puts the schema and the value into each error: the messages name both.
      const options = { strict: false, allErrors: true, verbose: true, validateFormats: false, logger: false, code: { regExp: linearRegExp(re2) } };
      return new (ajvClass(module))(options);
    })();
    engines.set(draft, found);
  }
  return found;
}

/**
 * A validator for `schema` (cached per schema object). Rejects with a plain Error naming
 * the problem when the schema itself is not valid JSON Schema.
 */
export async function schemaValidator(schema: JsonSchema): Promise<SchemaValidator> {
  const cached = compiled.get(schema);
  if (cached) return cached;
  const draft = draftOf(schema);
  // Draft-04 and older meta-schemas are not bundled; validate such schemas as draft-07.
  const validate = (await engine(draft)).compile(draft === '07' ? withoutOldDraft(schema) : schema);
  const validator: SchemaValidator = (value) => {
    resetPatternBudget();
    try {
      if (validate(value)) return [];
    } catch (error) {
      // Too costly to check here: the tool, which checks its own input and output, decides.
      if (error instanceof PatternBudgetExceeded) return [];
      throw error;
    }
    return ajvIssues(validate.errors ?? [], schema);
  };
  compiled.set(schema, validator);
  return validator;
}

/** Ajv is CommonJS: Node's ESM import puts the class at `default`, and Ajv's own `default` beside it. */
function ajvClass(module: unknown): new (options: object) => AjvLike {
  const outer = (module as { default: unknown }).default as { default?: unknown };
  return (typeof outer.default === 'function' ? outer.default : outer) as new (options: object) => AjvLike;
}

function withoutOldDraft(schema: JsonSchema): JsonSchema {
  if (typeof schema.$schema !== 'string' || schema.$schema.includes('draft-07')) return schema;
  const { $schema: _old, ...rest } = schema;
  return rest;
}
