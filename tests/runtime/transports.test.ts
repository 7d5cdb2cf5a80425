/** docs/TWYLT.md sections 1 and 2: option scan, service options, transports, output format. */
import { mkdtempSync, readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorOf, example, run } from '../support/process.js';
import { evalOnTestRuntime } from '../support/runtimes.js';

const echo = example('echo');
const freshDir = () => mkdtempSync(join(tmpdir(), 'twylt-run-'));

describe('service options', () => {
  it('--help starts with "<name> <version>" then the description, exit 0', async () => {
    const r = await run([...echo, '--help'], { input: '{"text": "ignored"}' });
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('echo 1.0.0');
    expect(r.stdout).toContain('Return the supplied text.');
    for (const word of ['INPUT_DESCRIBE', 'describe', 'json_spec', 'few_shots', 'input.json', '--error-format', 'TWYLT_ERROR_FORMAT', 'TWYLT_DEBUG', 'TWYLT_MAX_INPUT_BYTES']) expect(r.stdout).toContain(word);
    expect(r.stderr).toBe('');
  });
  it('-h is help too', async () => {
    const r = await run([...echo, '-h']);
    expect(r.stdout.split('\n')[0]).toBe('echo 1.0.0');
  });
  it('--version prints "<name> <version>", -v the version', async () => {
    expect((await run([...echo, '--version'])).stdout).toBe('echo 1.0.0\n');
    expect((await run([...echo, '-v'])).stdout).toBe('1.0.0\n');
  });
  it('ignores INPUT_DESCRIBE and stdin', async () => {
    const r = await run([...echo, '-v'], { env: { INPUT_DESCRIBE: 'bogus' }, input: 'not json' });
    expect(r).toMatchObject({ code: 0, stdout: '1.0.0\n', stderr: '' });
  });
  it('counts only as the first remaining argument (after the option scan)', async () => {
    const r = await run([...echo, '--debug', '--version']);
    expect(r.stdout).toBe('echo 1.0.0\n');
    const late = await run([...echo, '{"text": "a"}', '--version']);
    expect(late.code).toBe(0);
    expect(JSON.parse(late.stdout)).toEqual({ text: 'a' });
  });
});

describe('CLI transport', () => {
  it('prints the result indented by 2 with a final newline, nothing on stderr', async () => {
    const r = await run([...echo, '{"text": "héllo ✓"}']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('{\n  "text": "héllo ✓"\n}\n');
    expect(r.stderr).toBe('');
  });
  it('accepts leading whitespace before the payload', async () => {
    const r = await run([...echo, '  \n {"text": "x"}']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: 'x' });
  });
  it('ignores a first argument that is not a payload, and later arguments', async () => {
    const r = await run([...echo, 'host-arg', '{"text": "not a payload here"}'], { input: '{"text": "from stdin"}' });
    expect(JSON.parse(r.stdout)).toEqual({ text: 'from stdin' });
  });
  it('malformed JSON is a transport error, exit 4, even with INPUT_DESCRIBE set', async () => {
    for (const env of [{}, { INPUT_DESCRIBE: 'json_spec' }]) {
      const r = await run([...echo, '{"text": '], { env });
      expect(r.code).toBe(4);
      expect(r.stdout).toBe('');
      const error = errorOf(r);
      expect(error).toMatchObject({ type: 'protocol_error', source: 'twylt', stage: 'transport', message: 'Failed to read or parse input' });
      expect(Object.keys(error)).toEqual(['type', 'source', 'stage', 'message', 'exception']);
      expect(error.exception.type).toBeTypeOf('string');
    }
  });
  it('writes nothing to output.json in CLI mode', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'output.json'), 'old');
    const r = await run([...echo, '{"text": "a"}'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, 'output.json'), 'utf8')).toBe('old');
  });
});

describe('stdin transport', () => {
  it('reads a JSON object from stdin', async () => {
    const r = await run(echo, { input: '{"text": "piped"}' });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('{\n  "text": "piped"\n}\n');
  });
  it('a non-object on stdin is a transport error, exit 4', async () => {
    for (const input of ['[1, 2]', '"text"', '42', 'null']) {
      const r = await run(echo, { input });
      expect(r.code, input).toBe(4);
      expect(errorOf(r).stage).toBe('transport');
    }
  });
  it('malformed JSON on stdin is a transport error even with INPUT_DESCRIBE set', async () => {
    const r = await run(echo, { input: '{oops', env: { INPUT_DESCRIBE: 'brief' } });
    expect(r.code).toBe(4);
    expect(errorOf(r).stage).toBe('transport');
  });
  it('invalid UTF-8 on stdin is a transport error (the reference passes it through)', async () => {
    const r = await run(echo, { input: Buffer.from([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]) });
    expect(r.code).toBe(4);
    expect(errorOf(r).stage).toBe('transport');
  });
  it('whitespace-only stdin falls through to file mode', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'input.json'), '{"text": "from file"}');
    const r = await run(echo, { input: '  \n\t ', cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(readFileSync(join(dir, 'output.json'), 'utf8')).toBe('{\n  "text": "from file"\n}');
  });
});

describe('file transport', () => {
  it('reads input.json and writes output.json without a trailing newline, stdout empty', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'input.json'), '{"text": "ünïcode"}');
    const r = await run(echo, { cwd: dir });
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(readFileSync(join(dir, 'output.json'), 'utf8')).toBe('{\n  "text": "ünïcode"\n}');
    expect(readdirSync(dir).sort()).toEqual(['input.json', 'output.json']);
  });
  it('a missing input.json is a transport error, exit 4', async () => {
    const r = await run(echo, { cwd: freshDir() });
    expect(r.code).toBe(4);
    expect(errorOf(r).stage).toBe('transport');
  });
  it('malformed input.json is a transport error and removes a stale output.json', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'input.json'), '{"text": ');
    writeFileSync(join(dir, 'output.json'), '{"stale": true}');
    const r = await run(echo, { cwd: dir });
    expect(r.code).toBe(4);
    expect(errorOf(r).stage).toBe('transport');
    expect(existsSync(join(dir, 'output.json'))).toBe(false);
  });
  it('a non-object input.json is a validation error at <root>, code model_type, exit 2', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'input.json'), '[1, 2]');
    const r = await run(echo, { cwd: dir });
    expect(r.code).toBe(2);
    const error = errorOf(r);
    expect(error).toMatchObject({ type: 'validation_error', stage: 'input' });
    expect(error.errors).toHaveLength(1);
    expect(error.errors[0]).toMatchObject({ path: '<root>', code: 'model_type', value: [1, 2] });
  });
  it('a describe key in input.json is an unknown field, not a describe request', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'input.json'), '{"text": "a", "describe": "json_spec"}');
    const r = await run(echo, { cwd: dir });
    expect(r.code).toBe(2);
    expect(errorOf(r).errors).toEqual([{ path: 'describe', code: 'unknown_field', message: 'Unknown field', value: 'json_spec' }]);
  });
  it('a failed run leaves no output.json (stale one removed)', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'input.json'), '{}');
    writeFileSync(join(dir, 'output.json'), '{"stale": true}');
    const r = await run(echo, { cwd: dir });
    expect(r.code).toBe(2);
    expect(existsSync(join(dir, 'output.json'))).toBe(false);
  });
  it('INPUT_DESCRIBE in file mode describes without touching output.json', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'output.json'), 'kept');
    const r = await run(echo, { cwd: dir, env: { INPUT_DESCRIBE: 'brief' } });
    expect(r).toMatchObject({ code: 0, stdout: 'Return the supplied text.\n' });
    expect(readFileSync(join(dir, 'output.json'), 'utf8')).toBe('kept');
  });
});

describe('option scan', () => {
  it('--error-format human renders validation errors for people', async () => {
    const r = await run([...echo, '{}', '--error-format', 'human']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('Input validation failed\n\n  • text\n    Required field is missing\n\n1 validation error\n');
  });
  it('--error-format=X works anywhere; the last one wins; values are trimmed and lower-cased', async () => {
    const r = await run([...echo, '--error-format=human', '{}', '--error-format', ' JSON ']);
    expect(r.code).toBe(2);
    expect(errorOf(r).type).toBe('validation_error');
  });
  it('TWYLT_ERROR_FORMAT, then TOOLSPEC_ERROR_FORMAT, are the fallbacks', async () => {
    const human = await run([...echo, '{}'], { env: { TOOLSPEC_ERROR_FORMAT: 'HUMAN' } });
    expect(human.stderr.startsWith('Input validation failed\n')).toBe(true);
    const json = await run([...echo, '{}'], { env: { TWYLT_ERROR_FORMAT: 'json', TOOLSPEC_ERROR_FORMAT: 'human' } });
    expect(errorOf(json).type).toBe('validation_error');
    const cli = await run([...echo, '{}', '--error-format', 'json'], { env: { TWYLT_ERROR_FORMAT: 'human' } });
    expect(errorOf(cli).type).toBe('validation_error');
  });
  it('an unsupported error format is a transport protocol error in JSON, exit 4 (the reference crashes)', async () => {
    for (const [argv, env] of [[['--error-format', 'xml'], {}], [['--error-format'], {}], [[], { TWYLT_ERROR_FORMAT: 'yaml' }]] as const) {
      const r = await run([...echo, '{"text": "a"}', ...argv], { env });
      expect(r.code).toBe(4);
      const error = errorOf(r);
      expect(error).toMatchObject({ type: 'protocol_error', stage: 'transport' });
    }
  });
  it('--debug adds a traceback as the last key', async () => {
    const r = await run([...echo, '--debug', '{"text": 5}']);
    expect(r.code).toBe(2);
    const error = errorOf(r);
    expect(Object.keys(error).at(-1)).toBe('traceback');
  });
  it('TWYLT_DEBUG accepts 1/true/yes/on in any case; TOOLSPEC_DEBUG only when TWYLT_DEBUG is unset', async () => {
    for (const value of ['1', 'TRUE', 'Yes', 'on']) {
      expect(errorOf(await run([...echo, '{}'], { env: { TWYLT_DEBUG: value } })).traceback, value).toBeTypeOf('string');
    }
    expect(errorOf(await run([...echo, '{}'], { env: { TWYLT_DEBUG: 'no' } })).traceback).toBeUndefined();
    expect(errorOf(await run([...echo, '{}'], { env: { TOOLSPEC_DEBUG: 'yes' } })).traceback).toBeTypeOf('string');
    expect(errorOf(await run([...echo, '{}'], { env: { TWYLT_DEBUG: '0', TOOLSPEC_DEBUG: '1' } })).traceback).toBeUndefined();
  });
  it('no traceback without debug', async () => {
    const r = await run([...echo, '{"text": 1}']);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(errorOf(r).traceback).toBeUndefined();
  });
});

describe('unknown options', () => {
  it('an option-like first argument the tool does not know is a transport error naming it, exit 4; the payload is not swallowed silently', async () => {
    for (const option of ['--bogus', '-x', '--verison']) {
      const r = await run([...echo, option, '{"text": "a"}'], { input: '{"text": "from stdin"}' });
      expect(r.code, option).toBe(4);
      expect(r.stdout).toBe('');
      const error = errorOf(r);
      expect(error).toMatchObject({ type: 'protocol_error', source: 'twylt', stage: 'transport' });
      expect(error.exception.type).toBe('UnknownOption');
      expect(error.exception.message).toContain(`Unknown option '${option}'`);
    }
  });
  it('in human format too, before any input is read (no output.json is touched)', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'input.json'), '{"text": "file"}');
    const r = await run([...echo, '--bogus', '--error-format', 'human'], { cwd: dir });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^Failed to read or parse input: UnknownOption: Unknown option '--bogus'/);
    expect(readdirSync(dir)).toEqual(['input.json']);
  });
  it('the options the tool knows, and a first argument without a dash (a wrapper\'s), are still accepted', async () => {
    expect(JSON.parse((await run([...echo, '--debug', '{"text": "a"}'])).stdout)).toEqual({ text: 'a' });
    expect(JSON.parse((await run([...echo, 'wrapper-arg', '--bogus'], { input: '{"text": "b"}' })).stdout)).toEqual({ text: 'b' });
    expect(JSON.parse((await run([...echo, '{"text": "c"}', '--bogus'])).stdout)).toEqual({ text: 'c' });
  });
});

describe(`the input size limit (${'TWYLT_MAX_INPUT_BYTES'})`, () => {
  const payload = '{"text": "sized"}';
  const size = Buffer.byteLength(payload);
  const limited = (bytes: number) => ({ TWYLT_MAX_INPUT_BYTES: String(bytes) });
  const expectTooLarge = (r: Awaited<ReturnType<typeof run>>, where: string, limit: number) => {
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).toBe('');
    const error = errorOf(r);
    expect(error).toMatchObject({ type: 'protocol_error', source: 'twylt', stage: 'transport' });
    expect(error.exception).toEqual({
      type: 'InputTooLarge',
      message: `The input on ${where} is larger than the limit of ${limit} bytes; set TWYLT_MAX_INPUT_BYTES to a larger number of bytes to allow it`,
    });
  };
  it('stdin: a payload of exactly the limit passes, one byte more is refused', async () => {
    expect(JSON.parse((await run(echo, { input: payload, env: limited(size) })).stdout)).toEqual({ text: 'sized' });
    expectTooLarge(await run(echo, { input: payload, env: limited(size - 1) }), 'stdin', size - 1);
  });
  it('the command-line argument: the same, counted in bytes of UTF-8', async () => {
    const wide = '{"text": "é"}';
    const bytes = Buffer.byteLength(wide);
    expect(JSON.parse((await run([...echo, wide], { env: limited(bytes) })).stdout)).toEqual({ text: 'é' });
    expectTooLarge(await run([...echo, wide], { env: limited(bytes - 1) }), 'the command-line argument', bytes - 1);
  });
  it('input.json: the same, and a refused input.json leaves no output.json', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'input.json'), payload);
    expect((await run(echo, { cwd: dir, env: limited(size) })).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'output.json'), 'utf8'))).toEqual({ text: 'sized' });
    expectTooLarge(await run(echo, { cwd: dir, env: limited(size - 1) }), 'input.json', size - 1);
    expect(readdirSync(dir)).toEqual(['input.json']);
  });
  it('a limit that is not a whole number of bytes a string can hold is a transport error, exit 4', async () => {
    // Beyond the longest string, valid input could not be decoded (and was called invalid UTF-8).
    // The longest string of the runtime under test: V8's and JavaScriptCore's differ.
    const longest = Number(evalOnTestRuntime("console.log(process.getBuiltinModule('node:buffer').constants.MAX_STRING_LENGTH)"));
    for (const value of ['0', '-5', '1e6', 'lots', '64MB', String(longest + 1), '9007199254740993']) {
      const r = await run([...echo, payload], { env: { TWYLT_MAX_INPUT_BYTES: value } });
      expect(r.code, value).toBe(4);
      expect(errorOf(r).exception).toEqual({ type: 'InvalidInputLimit', message: `TWYLT_MAX_INPUT_BYTES must be a whole number of bytes from 1 to ${longest}, got '${value}'` });
    }
    expect((await run([...echo, payload], { env: { TWYLT_MAX_INPUT_BYTES: String(longest) } })).code).toBe(0);
  });
});
