/**
 * The first check: read json_spec. What it learns (spec, schema validators, a valid input)
 * is what most other checks build on.
 */
import { isDeepStrictEqual } from 'node:util';
import { schemaValidator } from '../../client/schema-check.js';
import type { ToolSpec } from '../../client/types.js';
import { FORMAT_VERSION } from '../../protocol/constants.js';
import { isRecord } from '../../protocol/record.js';
import { judge, payload, type CheckDef, type SuiteContext } from '../check.js';
import { expectJsonOutput } from '../expect.js';
import { sample } from '../schema-walk.js';

const SPEC_KEYS = ['format_version', 'name', 'version', 'description', 'requirements', 'inputSchema', 'outputSchema', 'few_shots'];

export const specCheck: CheckDef = {
  id: 'json_spec',
  title: 'describe json_spec: all keys, in order, with the right types',
  async run(t) {
    const run = await t.probe({ args: [payload({ describe: 'json_spec' })] });
    const { problems, value } = expectJsonOutput(run);
    if (!isRecord(value)) return judge(problems.length ? problems : ['json_spec is not a JSON object'], '');
    const keys = Object.keys(value);
    if (!isDeepStrictEqual(keys, SPEC_KEYS)) problems.push(`keys are ${keys.join(', ')}; expected ${SPEC_KEYS.join(', ')}`);
    if (value.format_version !== FORMAT_VERSION) problems.push(`format_version is ${JSON.stringify(value.format_version)}, expected "${FORMAT_VERSION}"`);
    for (const key of ['name', 'version', 'description']) if (typeof value[key] !== 'string') problems.push(`${key} must be a string`);
    const requirements = value.requirements;
    if (!isRecord(requirements) || !['tool', 'format', 'content'].every((key) => typeof requirements[key] === 'string')) {
      problems.push('requirements must be {"tool", "format", "content"} strings');
    }
    for (const key of ['inputSchema', 'outputSchema']) if (!isRecord(value[key])) problems.push(`${key} must be a JSON object`);
    const shots = value.few_shots;
    if (!Array.isArray(shots) || !shots.every((shot) => isRecord(shot) && isDeepStrictEqual(Object.keys(shot).sort(), ['input', 'output']))) {
      problems.push('few_shots must be an array of {"input", "output"}');
    }
    if (isRecord(value.inputSchema) && isRecord(value.outputSchema)) {
      await learn(t.context, { ...value, few_shots: Array.isArray(shots) ? shots : [] } as unknown as ToolSpec);
    }
    return judge(problems, `${value.name} ${value.version}, format ${value.format_version}`);
  },
};

/** Keep the spec, compile its schemas and find an input the tool must accept. */
async function learn(context: SuiteContext, spec: ToolSpec): Promise<void> {
  context.spec = spec;
  try {
    context.validateInput = await schemaValidator(spec.inputSchema);
    context.validateOutput = await schemaValidator(spec.outputSchema);
  } catch {
    context.validateInput = context.validateOutput = undefined;
    return; // the schema check reports it
  }
  const candidates: Array<[unknown, string]> = spec.few_shots.map((shot, i) => [isRecord(shot) ? shot.input : undefined, `few_shots[${i}].input`]);
  candidates.push([sample(spec.inputSchema, spec.inputSchema), 'generated from inputSchema']);
  for (const [input, source] of candidates) {
    if (isRecord(input) && context.validateInput(input).length === 0) {
      context.base = input;
      context.baseSource = source;
      return;
    }
  }
}
