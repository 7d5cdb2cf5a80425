// The floor of any Zod tool: node that imports zod, parses one small object and prints it.
import * as z from 'zod';

const value = z.object({ text: z.string() }).parse({ text: 'hello' });
process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
