/**
 * Wire compatibility: a consumer that parses a Python TWYLT tool's output must parse ours
 * the same way. The foreign tool (tests/fixtures/python/echo_tool.py, standard library only,
 * written from docs/TWYLT.md) and our TypeScript twin of it (same contract, same business
 * logic) answer the same cases; we compare what consumers rely on.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixture, run, ROOT, type Finished } from '../support/process.js';

const python = (() => {
  try {
    execFileSync('python3', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

const foreign = ['python3', join(ROOT, 'tests/fixtures/python/echo_tool.py')];
const ours = python ? fixture('py_echo_twin') : [];

interface Case {
  name: string;
  args?: string[];
  input?: string;
  env?: Record<string, string>;
  file?: string;
}

const cases: Case[] = [
  { name: 'success on the CLI', args: ['{"text": "ab", "times": 2, "case": "upper", "decor": {"prefix": "<", "suffix": ">"}}'] },
  { name: 'success on stdin', input: '{"text": "héllo"}' },
  { name: 'success in file mode', file: '{"text": "x", "shout": true}' },
  { name: 'missing required', args: ['{"times": 2}'] },
  { name: 'nested missing and unknown', args: ['{"text": "a", "decor": {"suffix": "!", "extra": 1}, "zz": true}'] },
  { name: 'wrong types incl. null', args: ['{"text": 5, "times": "2", "scale": null, "shout": "yes", "decor": []}'] },
  { name: 'fraction for an integer', args: ['{"text": "a", "times": 2.5}'] },
  { name: 'constraints', args: ['{"text": "", "times": 9, "scale": 0, "case": "title"}'] },
  { name: 'unknown fields only', args: ['{"text": "a", "b": 1, "c": {"d": 2}}'] },
  { name: 'malformed CLI JSON', args: ['{"text": '] },
  { name: 'non-object stdin', input: '[1]' },
  { name: 'malformed stdin with INPUT_DESCRIBE', input: '{x', env: { INPUT_DESCRIBE: 'json_spec' } },
  { name: 'non-object input.json', file: '"text"' },
  { name: 'malformed input.json', file: '{"text"' },
  { name: 'no input at all', file: undefined },
  { name: 'describe in input.json is an unknown field', file: '{"text": "a", "describe": "brief"}' },
  { name: 'business failure (missing file)', args: ['{"text": "a", "path": "/nonexistent/twylt-parity"}'] },
  { name: 'bad describe mode in the payload', args: ['{"describe": "everything"}'] },
  { name: 'non-string describe', args: ['{"describe": 3}'] },
  { name: 'bad INPUT_DESCRIBE', env: { INPUT_DESCRIBE: 'Brief' } },
  { name: 'empty describe runs the tool', args: ['{"describe": "", "text": "a"}'] },
  { name: 'null describe defers to INPUT_DESCRIBE', args: ['{"describe": null}'], env: { INPUT_DESCRIBE: 'requirements' } },
  { name: 'human validation error', args: ['{"times": 0}', '--error-format', 'human'] },
  { name: 'version', args: ['--version'] },
  { name: 'short version', args: ['-v'] },
  ...['brief', 'schema', 'requirements', 'few_shots', 'json_spec'].flatMap((mode) => [
    { name: `describe ${mode} by key`, args: [JSON.stringify({ describe: mode })] },
    { name: `describe ${mode} by INPUT_DESCRIBE`, env: { INPUT_DESCRIBE: mode } },
  ]),
];

interface Observed {
  code: number | null;
  stdout: unknown;
  error?: unknown;
  human?: string;
  outputFile?: unknown;
}

/** What a consumer relies on: exit code, stdout, the error's fixed fields, issue paths, codes and values, key orders. */
function observe(result: Finished, dir: string): Observed {
  const observed: Observed = { code: result.code, stdout: result.stdout };
  if (result.stdout.trimStart().startsWith('{') || result.stdout.trimStart().startsWith('[')) {
    const parsed = JSON.parse(result.stdout);
    observed.stdout = { keys: Array.isArray(parsed) ? null : Object.keys(parsed), value: parsed, text: result.stdout };
  }
  if (result.stderr.startsWith('{')) {
    const { error } = JSON.parse(result.stderr);
    observed.error = {
      keys: Object.keys(error),
      type: error.type,
      source: error.source,
      stage: error.stage,
      message: error.message,
      issues: error.errors?.map((i: Record<string, unknown>) => ({ keys: Object.keys(i), path: i.path, code: i.code, value: i.value })),
      exceptionKeys: error.exception && Object.keys(error.exception),
    };
  } else if (result.stderr) {
    // Human format: the fixed messages and layout; non-fixed issue messages are the implementations' own.
    observed.human = result.stderr.replace(/\n {4}(?!Required field is missing|Unknown field|Expected an? (integer|number|boolean|string)\n).*\n/g, '\n    <message>\n');
  }
  const outputPath = join(dir, 'output.json');
  if (existsSync(outputPath)) observed.outputFile = readFileSync(outputPath, 'utf8');
  return observed;
}

async function runCase(command: string[], c: Case): Promise<Observed> {
  const dir = mkdtempSync(join(tmpdir(), 'twylt-parity-'));
  if (c.file !== undefined) writeFileSync(join(dir, 'input.json'), c.file);
  const result = await run([...command, ...(c.args ?? [])], { input: c.input ?? '', env: c.env, cwd: dir });
  return observe(result, dir);
}

describe.skipIf(!python)('wire parity with a foreign (Python) TWYLT tool' + (python ? '' : ' [skipped: python3 not found]'), () => {
  for (const c of cases) {
    it(c.name, async () => {
      const [theirs, mine] = await Promise.all([runCase(foreign, c), runCase(ours, c)]);
      expect(mine).toEqual(theirs);
    });
  }
});

/**
 * Maps, free-form values, list[Any], Any and an optional model (issue 12): the Python tool
 * publishes and validates them as a Pydantic model would; our twin is written in Zod.
 */
const foreignShapes = ['python3', join(ROOT, 'tests/fixtures/python/shapes_tool.py')];
const ourShapes = python ? fixture('py_shapes_twin') : [];

const shapeCases: Case[] = [
  { name: 'success with every shape', args: ['{"name": "bo", "headers": {"A": "1"}, "meta": {"k": [1, null, {"z": true}]}, "items": [1, "x", null, [2]], "extra": {"q": [false]}, "inner": {"a": 3}}'] },
  { name: 'success with the defaults', input: '{"name": "ada", "headers": {}}' },
  { name: 'success in file mode, nulls in the optional values', file: '{"name": "c", "headers": {"x": "y"}, "meta": null, "extra": null, "inner": null}' },
  { name: 'a non-object at a map, a free-form object, a list and a model', args: ['{"name": "a", "headers": 5, "meta": "x", "items": {}, "inner": []}'] },
  { name: 'null at a required map', args: ['{"name": null, "headers": null}'] },
  { name: 'a bad map entry, reported at its key', args: ['{"name": "a", "headers": {"ok": "1", "bad": 2, "worse": null}}'] },
  { name: 'unknown and missing keys inside the optional model', args: ['{"name": "a", "headers": {}, "inner": {"b": 1}}'] },
  { name: 'unknown top-level keys beside free-form values', args: ['{"name": "a", "headers": {}, "meta": {"any": 1}, "zz": 1}'] },
  { name: 'a non-object input.json', file: '["name"]' },
  { name: 'human validation error', args: ['{"headers": []}', '--error-format', 'human'] },
  ...['brief', 'requirements', 'few_shots'].map((mode) => ({ name: `describe ${mode}`, args: [JSON.stringify({ describe: mode })] })),
];

/** A published schema as a consumer reads it: references resolved, titles and `$schema` aside, `type: [X, "null"]` as the `anyOf` it means, keys sorted. */
function readAs(schema: unknown, root: Record<string, unknown> = schema as Record<string, unknown>): unknown {
  if (Array.isArray(schema)) return schema.map((item) => readAs(item, root));
  if (typeof schema !== 'object' || schema === null) return schema;
  let node = schema as Record<string, unknown>;
  if (typeof node.$ref === 'string') node = (root.$defs as Record<string, Record<string, unknown>>)[node.$ref.split('/').pop()!]!;
  if (Array.isArray(node.type) && node.type.length === 2 && node.type.includes('null')) {
    const { type, ...rest } = node;
    node = { anyOf: [{ type: (type as string[]).find((t) => t !== 'null') }, { type: 'null' }], ...rest };
  }
  const entries = Object.entries(node).filter(([key]) => !['title', '$schema', '$defs'].includes(key));
  const keep = (key: string, value: unknown) => (['default', 'examples', 'const', 'enum', 'required'].includes(key) ? value : readAs(value, root));
  return Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)).map(([key, value]) => [key, key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, readAs(v, root)])) : keep(key, value)]));
}

describe.skipIf(!python)('wire parity on maps and free-form values, with a Zod twin' + (python ? '' : ' [skipped: python3 not found]'), () => {
  for (const c of shapeCases) {
    it(c.name, async () => {
      const [theirs, mine] = await Promise.all([runCase(foreignShapes, c), runCase(ourShapes, c)]);
      expect(mine).toEqual(theirs);
    });
  }

  it('publishes every field as the reference does (read as a consumer reads it)', async () => {
    const describe = async (command: string[]) => JSON.parse((await run([...command, '{"describe": "schema"}'])).stdout);
    const [theirs, mine] = await Promise.all([describe(foreignShapes), describe(ourShapes)]);
    for (const side of ['inputSchema', 'outputSchema']) expect(readAs(mine[side])).toEqual(readAs(theirs[side]));
    expect(mine.inputSchema.properties.headers).toEqual({ type: 'object', additionalProperties: { type: 'string' }, description: 'Header names and values' });
  });
});
