/** The echo tool with plain JSON Schema contracts: no schema library is loaded at all. */
import { defineTool } from 'twylt';

defineTool({
  name: 'echo_json_schema',
  version: '1.0.0',
  description: 'Return the supplied text (contracts written as plain JSON Schema).',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', description: 'Text to repeat' } },
    required: ['text'],
  },
  outputSchema: {
    type: 'object',
    properties: { text: { type: 'string', description: 'Repeated text' } },
    required: ['text'],
  },
  fewShots: [{ input: { text: 'hello' }, output: { text: 'hello' } }],
  biz: (input) => ({ text: input.text }),
}).run();
