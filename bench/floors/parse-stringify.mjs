// The floor of a large payload: read it, parse it, stringify it with indent 2, write it.
// `stdin` prints to stdout (with a final newline); `file` reads input.json, writes output.json.
import { readFileSync, writeFileSync } from 'node:fs';

const transport = process.argv[2];
if (transport === 'file') {
  const value = JSON.parse(readFileSync('input.json', 'utf8'));
  writeFileSync('output.json', JSON.stringify(value, null, 2));
} else {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
