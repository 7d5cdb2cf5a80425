// The soak test's tool (bench/soak.mjs): answers, fails, crashes, hangs or floods on request.
// With SOAK_RAN_LOG set, each call that reaches biz appends its id there, so the soak can
// tell a call run twice (or one run without being sent) from one run once.
import { appendFileSync } from 'node:fs';
import { defineTool } from 'twylt';

const Input = {
  type: 'object',
  properties: {
    id: { type: 'string', minLength: 1 },
    action: { enum: ['ok', 'fail', 'crash', 'hang', 'flood', 'slow'] },
  },
  required: ['id', 'action'],
  additionalProperties: false,
};
const Output = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false };

defineTool({
  name: 'soak',
  version: '1.0.0',
  description: 'Misbehave on request, for the soak test.',
  inputSchema: Input,
  outputSchema: Output,
  async biz({ id, action }) {
    if (process.env.SOAK_RAN_LOG) appendFileSync(process.env.SOAK_RAN_LOG, `${id}\n`);
    switch (action) {
      case 'fail':
        throw new Error(`failed on request (${id})`);
      case 'crash':
        process.kill(process.pid, 'SIGKILL');
        return new Promise(() => {});
      case 'hang':
        return new Promise(() => setInterval(() => {}, 1000));
      case 'flood':
        process.stdout.write('x'.repeat(1 << 20));
        return { id };
      case 'slow':
        await new Promise((resolve) => setTimeout(resolve, 400));
        return { id };
      default:
        return { id };
    }
  },
}).run();
