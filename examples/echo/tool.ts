import * as z from 'zod'; // Zod's documented form; `import { z }` works too
import { Tool } from 'twylt';

const Input = z.object({ text: z.string().describe('Text to repeat') });
const Output = z.object({ text: z.string().describe('Repeated text') });

class Echo extends Tool<typeof Input, typeof Output> {
  inputSchema = Input;
  outputSchema = Output;
  name = 'echo';
  version = '1.0.0';
  description = 'Return the supplied text.';
  fewShots = [{ input: { text: 'hello' }, output: { text: 'hello' } }];
  biz(data: z.infer<typeof Input>) { return { text: data.text }; }
}

Echo.run();
