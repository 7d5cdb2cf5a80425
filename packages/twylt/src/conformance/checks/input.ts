/**
 * Input validation (PROTOCOL.md section 4), with inputs generated from the published
 * inputSchema. Only values no conforming tool may accept are sent: wrong JSON types such as
 * null or {} (never "5" for an integer: the reference coerces that), unknown keys,
 * missing keys, and values outside declared bounds.
 */
import { isDeepStrictEqual } from 'node:util';
import { ISSUE_MESSAGES } from '../../protocol/issues.js';
import { judge, payload, skip, UNKNOWN_KEY, type CheckDef, type CheckGroup, type CheckRun } from '../check.js';
import { expectError, expectIssue, issuesOf } from '../expect.js';
import { fieldsOf, isObjectSchema, isRecord, plainType, sample, violations, WRONG_TYPE_CODES, type Field } from '../schema-walk.js';

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

/** The first top-level field that is a closed object with fields of its own. */
function nestedField(t: { spec: { inputSchema: Record<string, unknown> } }): Field | undefined {
  const root = t.spec.inputSchema;
  return fieldsOf(root, root).find((field) => isObjectSchema(field.schema) && fieldsOf(field.schema, root).length > 0);
}

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
      title: 'unknown keys inside a nested object are reported with a dotted path',
      needs: ['spec', 'base'],
      async run(t) {
        const field = nestedField(t);
        if (!field) return skip('the inputSchema has no nested object field');
        const inner = isRecord(t.base[field.name]) ? (t.base[field.name] as Record<string, unknown>) : sample(field.schema, root);
        if (!isRecord(inner)) return skip(`could not build a valid value for ${field.name}`);
        const input = { ...t.base, [field.name]: { ...inner, [UNKNOWN_KEY]: true } };
        const path = `${field.name}.${UNKNOWN_KEY}`;
        return judge(await expectInvalid(t, input, (issues) => expectIssue(issues, path, ['unknown_field'], { is: true })), `rejected at ${path}`);
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
      title: 'a missing field of a nested object is reported with the object as value',
      needs: ['spec', 'base'],
      async run(t) {
        const field = nestedField(t);
        const inner = field && fieldsOf(field.schema, root).find((f) => f.required);
        if (!field || !inner) return skip('the inputSchema has no nested object with a required field');
        const path = `${field.name}.${inner.name}`;
        return judge(await expectInvalid(t, { ...t.base, [field.name]: {} }, (issues) => expectIssue(issues, path, ['required'], { is: {} })), `reported at ${path}`);
      },
    },
    {
      id: 'input.wrong_type',
      title: 'null and {} where a plain type is expected give that type\'s issue code',
      needs: ['spec', 'base'],
      async run(t) {
        const typed = fields.filter((field) => plainType(field.schema) !== undefined && WRONG_TYPE_CODES[plainType(field.schema)!]);
        if (typed.length === 0) return skip('no top-level field has a single plain type');
        const problems: string[] = [];
        for (const wrong of [null, {}]) {
          // {} may be a valid value for an object field: leave those out of the second round.
          const targets = typed.filter((field) => !(wrong !== null && plainType(field.schema) === 'object'));
          const input = { ...t.base, ...Object.fromEntries(targets.map((field) => [field.name, wrong])) };
          problems.push(
            ...(await expectInvalid(t, input, (issues) =>
              targets.flatMap((field) => expectIssue(issues, field.name, [WRONG_TYPE_CODES[plainType(field.schema)!]!], wrong === null ? undefined : { is: wrong })),
            )).map((p) => `${JSON.stringify(wrong)}: ${p}`),
          );
        }
        return judge(problems, `checked ${typed.map((field) => field.name).join(', ')}`);
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
