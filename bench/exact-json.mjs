/**
 * What exact numbers cost a consumer (ADR 0009): `parseJson` of a tool's output against plain
 * `JSON.parse` of the same text, in one process, alternated, medians. Three outputs of the
 * same shape (an array of 100 000 objects, 6 to 7 MB): plain numbers (the fast paths of both
 * fidelities), one integer beyond 2^53 per object (value fidelity must parse again, keeping
 * each number's source), and Python-spelt floats (text fidelity, the same).
 * Prints one JSON object: {rows: [{row, ms, floorMs}]}.
 *
 *   node bench/exact-json.mjs ROUNDS
 */
import { parseJson } from 'twylt/client';

const rounds = Number(process.argv[2] ?? 5);
const COUNT = 100_000;

function output(number) {
  const items = [];
  for (let i = 0; i < COUNT; i++) items.push(`{"id":${i},"name":"item ${i}","size":${number(i)},"ok":true}`);
  return `[${items.join(',')}]`;
}

const cases = [
  { row: 'parseJson, plain numbers (value)', text: output((i) => i * 7), fidelity: 'value' },
  { row: 'parseJson, plain numbers (text)', text: output((i) => i * 7), fidelity: 'text' },
  { row: 'parseJson, an integer beyond 2^53 in each object (value)', text: output((i) => `17960842049060${String(i).padStart(5, '0')}`), fidelity: 'value' },
  { row: 'parseJson, Python floats such as 1.0 and 1e-07 (text)', text: output((i) => (i % 2 ? `${i}.0` : `${i}e-07`)), fidelity: 'text' },
];

function time(fn) {
  const started = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const rows = [];
for (const { row, text, fidelity } of cases) {
  const exact = [];
  const plain = [];
  parseJson(text, fidelity); // warm-up
  JSON.parse(text);
  for (let round = 0; round < rounds; round++) {
    if (round % 2) {
      exact.push(time(() => parseJson(text, fidelity)));
      plain.push(time(() => JSON.parse(text)));
    } else {
      plain.push(time(() => JSON.parse(text)));
      exact.push(time(() => parseJson(text, fidelity)));
    }
  }
  rows.push({ row: `${row}, ${(text.length / 1e6).toFixed(1)} MB`, ms: median(exact), floorMs: median(plain) });
}
process.stdout.write(`${JSON.stringify({ rows })}\n`);
