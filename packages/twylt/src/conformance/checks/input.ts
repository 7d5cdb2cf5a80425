/**
 * Input validation (docs/TWYLT.md section 4), with inputs generated from the published
 * inputSchema. Only values no conforming tool may accept are sent: wrong JSON types such as
 * null or {} (never "5" for an integer: the reference coerces that), unknown keys,
 * missing keys, and values outside declared bounds. Maps and free-form values are the
 * author's declared shapes: any key is allowed there, a wrong type is `dict_type`.
 */
import { isDeepStrictEqual } from 'node:util';
import { ISSUE_MESSAGES } from '../../protocol/issues.js';
import { isRecord } from '../../protocol/record.js';
import { isObjectSchema } from '../../schema/json-schema-subset.js';
import { judge, payload, skip, UNKNOWN_KEY, warn, type CheckDef, type CheckGroup, type CheckRun } from '../check.js';
import { expectError, expectIssue, expectJsonOutput, issuesOf, runProblems, toolSaid } from '../expect.js';
import {
  fieldsOf, freeFormKind, isMapSchema, plainType, sample, valueSchema, violations, wrongTypeCode,
  type Field, type FreeForm,
} from '../schema-walk.js';
import type { JsonSchema } from '../../client/types.js';

function short(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 20)}…(${text.length} chars)` : text;
}

/** Send `input` on the CLI; expect exit 2 and let `inspect` look at the issues. */
async function expectInvalid(t: CheckRun, input: unknown, inspect: (issues: ReturnType<typeof issuesOf>) => string[]): Promise<string[]> {
  const run = await t.probe({ args: [payload(input)] });
  const verdict = expectError(run, 'inputInvalid');
  if (verdict.error) verdict.problems.push(...inspect(issuesOf(verdict.error)));
  return verdict.problems;
}

/** A top-level field holding a model with fields of its own, optional (`X | None`) or not. */
interface Nested {
  field: Field;
  model: JsonSchema;
}

function nestedModels(fields: Field[], root: JsonSchema): Nested[] {
  return fields.flatMap((field) => {
    const { schema } = valueSchema(field, root);
    return isObjectSchema(schema) && fieldsOf(schema, root).length > 0 ? [{ field, model: schema }] : [];
  });
}

/** A wrong value for a field, with the code it must give: null for a plain field; for an optional one, the other container. */
interface WrongType {
  field: Field;
  code: string;
  value: unknown;
}

function wrongTypes(fields: Field[], root: JsonSchema, round: 'null' | 'non-null'): WrongType[] {
  return fields.flatMap((field): WrongType[] => {
    const { schema, nullable } = valueSchema(field, root);
    const code = wrongTypeCode(schema);
    if (!code) return [];
    const object = plainType(schema) === 'object';
    // null is wrong only where the field is not optional; {} may be a valid object, [] is not.
    if (round === 'null') return nullable ? [] : [{ field, code, value: null }];
    return [{ field, code, value: object ? [] : {} }];
  });
}

/** A map whose entries have one plain type: `dict[str, str]`. */
function typedMaps(fields: Field[], root: JsonSchema): Array<{ field: Field; code: string }> {
  return fields.flatMap((field) => {
    const { schema } = valueSchema(field, root);
    const entries = schema.additionalProperties;
    if (!isMapSchema(schema) || !isRecord(entries) || 'propertyNames' in schema || 'patternProperties' in schema) return [];
    const code = wrongTypeCode(entries);
    return code ? [{ field, code }] : [];
  });
}

/** Values every free-form shape must take: keys and items of every JSON kind. */
const FREE_VALUES: Record<FreeForm, unknown> = {
  any: { [UNKNOWN_KEY]: [1, 'x', null, { deep: true }] },
  object: { [UNKNOWN_KEY]: [1, 'x', null, { deep: true }], n: 1.5, o: {} },
  array: [1, 'x', null, { [UNKNOWN_KEY]: [true] }, []],
};

export const inputChecks: CheckGroup = (context) => {
  const root = context.spec?.inputSchema ?? {};
  const fields = context.spec ? fieldsOf(root, root) : [];
  const checks: CheckDef[] = [
    {
      id: 'input.unknown_field',
      title: 'unknown top-level keys are reported, after declared fields, in input order',
      needs: ['base'],
      async run(t) {
        const input = { ...t.base, [UNKNOWN_KEY]: 'x', [`${UNKNOWN_KEY}2`]: [1] };
        const problems = await expectInvalid(t, input, (issues) => {
          const found = [
            ...expectIssue(issues, UNKNOWN_KEY, ['unknown_field'], { is: 'x' }),
            ...expectIssue(issues, `${UNKNOWN_KEY}2`, ['unknown_field'], { is: [1] }),
          ];
          const order = issues.map((item) => item.path).filter((path) => path.startsWith(UNKNOWN_KEY));
          if (found.length === 0 && !isDeepStrictEqual(order, [UNKNOWN_KEY, `${UNKNOWN_KEY}2`])) found.push(`unknown keys reported in the order ${order.join(', ')}, not the input order`);
          const message = issues.find((item) => item.path === UNKNOWN_KEY)?.message;
          if (message !== undefined && message !== ISSUE_MESSAGES.unknown_field) found.push(`message is ${JSON.stringify(message)}, expected "${ISSUE_MESSAGES.unknown_field}"`);
          return found;
        });
        return judge(problems, `rejected (valid base: ${t.context.baseSource})`);
      },
    },
    {
      id: 'input.unknown_field.nested',
      title: 'unknown keys inside a nested model, optional or not, are reported with a dotted path',
      needs: ['spec', 'base'],
      async run(t) {
        const nested = nestedModels(fields, root);
        if (nested.length === 0) return skip('the inputSchema has no nested object field');
        const input: Record<string, unknown> = { ...t.base };
        for (const { field, model } of nested) {
          const inner = isRecord(t.base[field.name]) ? t.base[field.name] : sample(model, root);
          if (!isRecord(inner)) return skip(`could not build a valid value for ${field.name}`);
          input[field.name] = { ...inner, [UNKNOWN_KEY]: true };
        }
        const paths = nested.map(({ field }) => `${field.name}.${UNKNOWN_KEY}`);
        return judge(await expectInvalid(t, input, (issues) => paths.flatMap((path) => expectIssue(issues, path, ['unknown_field'], { is: true }))), `rejected at ${paths.join(', ')}`);
      },
    },
    {
      id: 'input.required',
      title: 'every missing required field is reported, in declaration order, with the payload as value',
      needs: ['spec'],
      async run(t) {
        const required = fields.filter((field) => field.required).map((field) => field.name);
        if (required.length === 0) return skip('the inputSchema has no required field');
        return judge(
          await expectInvalid(t, {}, (issues) => {
            const problems = required.flatMap((name) => expectIssue(issues, name, ['required'], { is: {} }));
            const order = issues.filter((item) => item.code === 'required').map((item) => item.path);
            if (problems.length === 0 && !isDeepStrictEqual(order, required)) problems.push(`required issues in the order ${order.join(', ')}; declared: ${required.join(', ')}`);
            return problems;
          }),
          `all of ${required.join(', ')} reported`,
        );
      },
    },
    {
      id: 'input.required.nested',
      title: 'a missing field of a nested model, optional or not, is reported with the object as value',
      needs: ['spec', 'base'],
      async run(t) {
        const nested = nestedModels(fields, root).flatMap(({ field, model }) => {
          const inner = fieldsOf(model, root).find((f) => f.required);
          return inner ? [`${field.name}.${inner.name}`] : [];
        });
        if (nested.length === 0) return skip('the inputSchema has no nested object with a required field');
        const input = { ...t.base, ...Object.fromEntries(nested.map((path) => [path.split('.')[0], {}])) };
        return judge(await expectInvalid(t, input, (issues) => nested.flatMap((path) => expectIssue(issues, path, ['required'], { is: {} }))), `reported at ${nested.join(', ')}`);
      },
    },
    {
      id: 'input.wrong_type',
      title: 'a wrong JSON type gives the type\'s issue code (dict_type at a map or free-form object, model_type at a model), in optional fields too',
      needs: ['spec', 'base'],
      async run(t) {
        const problems: string[] = [];
        const checked = new Set<string>();
        for (const round of ['null', 'non-null'] as const) {
          const targets = wrongTypes(fields, root, round);
          if (targets.length === 0) continue;
          const input = { ...t.base, ...Object.fromEntries(targets.map(({ field, value }) => [field.name, value])) };
          for (const { field } of targets) checked.add(field.name);
          const found = await expectInvalid(t, input, (issues) => targets.flatMap(({ field, code, value }) => expectIssue(issues, field.name, [code], { is: value })));
          problems.push(...found.map((p) => `${round === 'null' ? 'null' : '{} or []'}: ${p}`));
        }
        if (checked.size === 0) return skip('no top-level field has a single plain type');
        return judge(problems, `checked ${[...checked].join(', ')}`);
      },
    },
    {
      id: 'input.map_entry',
      title: 'a wrong entry in a map is reported at its key with the entry type\'s code',
      needs: ['spec', 'base'],
      async run(t) {
        const maps = typedMaps(fields, root);
        if (maps.length === 0) return skip('the inputSchema has no map field with typed entries');
        const input = { ...t.base, ...Object.fromEntries(maps.map(({ field }) => [field.name, { [UNKNOWN_KEY]: null }])) };
        const problems = await expectInvalid(t, input, (issues) => maps.flatMap(({ field, code }) => expectIssue(issues, `${field.name}.${UNKNOWN_KEY}`, [code], { is: null })));
        return judge(problems, `null entries reported at ${maps.map(({ field }) => `${field.name}.${UNKNOWN_KEY}`).join(', ')}`);
      },
    },
    {
      id: 'input.free_form',
      title: 'free-form values (Any, an object or array of anything) take any keys and values',
      needs: ['spec', 'schemas', 'base'],
      async run(t) {
        const free = fields.flatMap((field) => {
          const kind = freeFormKind(valueSchema(field, root).schema);
          return kind ? [{ field, value: FREE_VALUES[kind] }] : [];
        });
        if (free.length === 0) return skip('the inputSchema has no free-form field');
        const input = { ...t.base, ...Object.fromEntries(free.map(({ field, value }) => [field.name, value])) };
        const names = free.map(({ field }) => field.name).join(', ');
        const invalid = t.context.validateInput!(input);
        if (invalid.length > 0) return skip(`the inputSchema itself rejects the free-form values: ${invalid.map((item) => `${item.path || '/'} ${item.message}`).join('; ')}`);
        const run = await t.probe({ args: [payload(input)] });
        const { exitCode, stderr } = run.received;
        if (runProblems(run).length === 0 && (exitCode === 5 || exitCode === 6)) {
          return warn(`exit ${exitCode}: accepted by validation, then the tool failed (the environment may lack what it needs): ${toolSaid(stderr)}`);
        }
        const { problems } = expectJsonOutput(run);
        if (exitCode === 2) problems.push(`the tool's validation rejected them: ${issuesOf(expectError(run, 'inputInvalid').error).map((item) => `${item.path} ${item.code}`).join(', ')}`);
        return judge(problems, `accepted in ${names}`);
      },
    },
  ];
  // One check per declared bound of a top-level field.
  for (const field of fields) {
    for (const violation of violations(field.schema, root)) {
      checks.push({
        id: `input.constraint.${field.name}.${violation.keyword}`,
        title: `${field.name} outside its ${violation.keyword} is rejected`,
        needs: ['base'],
        async run(t) {
          const input = { ...t.base, [field.name]: violation.value };
          const problems = await expectInvalid(t, input, (issues) => expectIssue(issues, field.name, violation.codes, { is: violation.value }));
          return judge(problems, `${short(violation.value)} rejected with ${violation.codes.join(' or ')}`);
        },
      });
    }
  }
  return checks;
};
