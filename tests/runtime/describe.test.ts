/** docs/TWYLT.md sections 1 (step 4) and 5: describe requests and their outputs. */
import { describe, expect, it } from 'vitest';
import { errorOf, example, run } from '../support/process.js';

const echo = example('echo');
const listDirectory = example('list_directory');
const MODES = ['brief', 'schema', 'requirements', 'few_shots', 'json_spec'];

describe('describe requests', () => {
  it('every mode answers the same through the describe key, stdin and INPUT_DESCRIBE', async () => {
    for (const mode of MODES) {
      const viaCli = await run([...echo, JSON.stringify({ describe: mode })]);
      const viaStdin = await run(echo, { input: JSON.stringify({ describe: mode }) });
      const viaEnv = await run(echo, { env: { INPUT_DESCRIBE: mode } });
      expect(viaCli.code, mode).toBe(0);
      expect(viaCli.stderr).toBe('');
      expect(viaStdin.stdout).toBe(viaCli.stdout);
      expect(viaEnv.stdout).toBe(viaCli.stdout);
    }
  });
  it('brief is the plain description and a newline', async () => {
    expect((await run(echo, { env: { INPUT_DESCRIBE: 'brief' } })).stdout).toBe('Return the supplied text.\n');
  });
  it('the payload key wins over INPUT_DESCRIBE; the rest of the payload is not validated', async () => {
    const r = await run([...echo, '{"describe": "brief", "bogus": 1}'], { env: { INPUT_DESCRIBE: 'json_spec' } });
    expect(r).toMatchObject({ code: 0, stdout: 'Return the supplied text.\n' });
  });
  it('a null or empty describe key defers to INPUT_DESCRIBE, else runs the tool without it', async () => {
    for (const value of [null, '']) {
      const deferred = await run([...echo, JSON.stringify({ describe: value })], { env: { INPUT_DESCRIBE: 'brief' } });
      expect(deferred.stdout).toBe('Return the supplied text.\n');
      const executed = await run([...echo, JSON.stringify({ text: 'a', describe: value })]);
      expect(executed.code).toBe(0);
      expect(JSON.parse(executed.stdout)).toEqual({ text: 'a' });
    }
  });
  it('an unknown mode from the payload is a describe error naming it and the modes, exit 4', async () => {
    for (const bad of ['JSON_SPEC', ' brief', 'everything', 5, true, ['brief']]) {
      const r = await run([...echo, JSON.stringify({ describe: bad })]);
      expect(r.code, String(bad)).toBe(4);
      expect(r.stdout).toBe('');
      const error = errorOf(r);
      expect(error).toMatchObject({ type: 'protocol_error', source: 'twylt', stage: 'describe', message: 'Failed to process describe request' });
      expect(error.exception.message).toContain(typeof bad === 'string' ? bad : JSON.stringify(bad));
      for (const mode of MODES) expect(error.exception.message).toContain(mode);
    }
  });
  it('an unknown INPUT_DESCRIBE mode is a describe error with its own wording', async () => {
    const r = await run(echo, { env: { INPUT_DESCRIBE: 'Brief' } });
    expect(r.code).toBe(4);
    const error = errorOf(r);
    expect(error.stage).toBe('describe');
    expect(error.exception.message).toContain('INPUT_DESCRIBE');
    expect(error.exception.message).toContain("'Brief'");
    const fromKey = errorOf(await run([...echo, '{"describe": "Brief"}']));
    expect(fromKey.exception.message).not.toBe(error.exception.message);
  });
  it('an empty INPUT_DESCRIBE is no describe request', async () => {
    const r = await run([...echo, '{"text": "a"}'], { env: { INPUT_DESCRIBE: '' } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: 'a' });
  });
});

describe('describe outputs', () => {
  it('json_spec has the protocol keys in order, indented by 2', async () => {
    const r = await run(echo, { env: { INPUT_DESCRIBE: 'json_spec' } });
    const spec = JSON.parse(r.stdout);
    expect(Object.keys(spec)).toEqual(['format_version', 'name', 'version', 'description', 'requirements', 'inputSchema', 'outputSchema', 'few_shots']);
    expect(spec).toMatchObject({ format_version: '1.8', name: 'echo', version: '1.0.0', description: 'Return the supplied text.' });
    expect(r.stdout).toBe(`${JSON.stringify(spec, null, 2)}\n`);
    expect(spec.few_shots).toEqual([{ input: { text: 'hello' }, output: { text: 'hello' } }]);
  });
  it('schemas are closed, keep descriptions, and list required fields', async () => {
    const { inputSchema, outputSchema } = JSON.parse((await run(echo, { env: { INPUT_DESCRIBE: 'schema' } })).stdout);
    for (const schema of [inputSchema, outputSchema]) {
      expect(schema.type).toBe('object');
      expect(schema.additionalProperties).toBe(false);
      expect(schema.required).toEqual(['text']);
    }
    expect(inputSchema.properties.text).toMatchObject({ type: 'string', description: 'Text to repeat' });
    expect(outputSchema.properties.text).toMatchObject({ type: 'string', description: 'Repeated text' });
  });
  it('schema identity: $id and x-schema-version come last, only when declared', async () => {
    const spec = JSON.parse((await run(listDirectory, { env: { INPUT_DESCRIBE: 'json_spec' } })).stdout);
    expect(Object.keys(spec.inputSchema).slice(-2)).toEqual(['$id', 'x-schema-version']);
    expect(spec.inputSchema.$id).toBe('ListDirectoryInput');
    expect(spec.outputSchema.$id).toBe('ListDirectoryOutput');
    expect(spec.outputSchema['x-schema-version']).toBe('1.0.0');
    const echoSpec = JSON.parse((await run(echo, { env: { INPUT_DESCRIBE: 'json_spec' } })).stdout);
    expect(echoSpec.inputSchema.$id).toBeUndefined();
    expect(echoSpec.inputSchema['x-schema-version']).toBeUndefined();
    // nested objects are closed too
    expect(spec.outputSchema.properties.entries.items.additionalProperties).toBe(false);
  });
  it('requirements are the declared {tool, format, content}', async () => {
    const r = await run(listDirectory, { env: { INPUT_DESCRIBE: 'requirements' } });
    const requirements = JSON.parse(r.stdout);
    expect(Object.keys(requirements)).toEqual(['tool', 'format', 'content']);
    expect(requirements).toMatchObject({ tool: 'npm', format: 'package.json' });
  });
  it('few_shots is a JSON array of {input, output}', async () => {
    const shots = JSON.parse((await run(listDirectory, { env: { INPUT_DESCRIBE: 'few_shots' } })).stdout);
    expect(Array.isArray(shots)).toBe(true);
    expect(Object.keys(shots[0])).toEqual(['input', 'output']);
  });
});
