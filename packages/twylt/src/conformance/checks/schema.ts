/** The published schemas: valid JSON Schema, closed everywhere, an object at the input root (docs/TWYLT.md section 5). */
import { schemaValidator } from '../../client/schema-check.js';
import { judge, type CheckGroup } from '../check.js';
import { isObjectSchema } from '../../schema/json-schema-subset.js';
import { deref, openObjects } from '../schema-walk.js';

export const schemaChecks: CheckGroup = () => [
  {
    id: 'schema.valid',
    title: 'inputSchema and outputSchema are valid JSON Schema',
    needs: ['spec'],
    async run(t) {
      const problems: string[] = [];
      for (const key of ['inputSchema', 'outputSchema'] as const) {
        await schemaValidator(t.spec[key]).catch((error: Error) => problems.push(`${key}: ${error.message}`));
      }
      return judge(problems, 'both compile');
    },
  },
  {
    id: 'schema.closed',
    title: 'every model (an object with declared properties) is closed: additionalProperties false, or a schema for its extra keys',
    needs: ['spec'],
    async run(t) {
      const problems = (['inputSchema', 'outputSchema'] as const).flatMap((key) =>
        openObjects(t.spec[key]).map((pointer) => `${key}${pointer === '/' ? '' : pointer} is an open object`),
      );
      return judge(problems, 'closed on input and output');
    },
  },
  {
    id: 'schema.input_object',
    title: 'the inputSchema describes an object',
    needs: ['spec'],
    async run(t) {
      const schema = deref(t.spec.inputSchema, t.spec.inputSchema);
      return judge(isObjectSchema(schema) && schema.type === 'object' ? [] : ['the inputSchema root is not {"type": "object", ...}'], 'an object');
    },
  },
];
