// A Zod tool that returns the list it is given: the 200 000-object payload row.
import { z } from 'zod';
import { defineTool } from 'twylt';

const Item = z.object({ id: z.number().int(), name: z.string(), tags: z.array(z.string()), ok: z.boolean() });
const Items = z.object({ items: z.array(Item) });

defineTool({
  name: 'echo_items',
  version: '1.0.0',
  description: 'Return the supplied items.',
  inputSchema: Items,
  outputSchema: Items,
  biz: (input) => input,
}).run();
