/** How the launcher reads a describe request before deciding to import the tool (docs/TWYLT.md section 1). */
import { describe, expect, it } from 'vitest';
import { readRequest, type StdinSource } from '../../packages/twylt/src/bootstrap/request.js';

/** A stdin that counts its reads. */
function stdin(text: string | Buffer | null): StdinSource & { reads: number } {
  const source = {
    reads: 0,
    async read() {
      if (text === null) return null; // a terminal: never read
      source.reads++;
      return Buffer.from(text);
    },
  };
  return source;
}

describe('launcher request reading', () => {
  it('a CLI payload describe wins over INPUT_DESCRIBE, and stdin is not read', async () => {
    const input = stdin('{"describe": "brief"}');
    const request = await readRequest(['  {"describe": "requirements", "x": 1}'], { INPUT_DESCRIBE: 'json_spec' }, input);
    expect(request).toEqual({ mode: 'requirements', errorFormat: 'json', debug: false, payload: { source: 'cli', payload: { describe: 'requirements', x: 1 } } });
    expect(input.reads).toBe(0);
  });

  it('stdin is read when there is no CLI payload; its bytes are kept for the tool, and the payload parsed once for it', async () => {
    const input = stdin('{"describe": "json_spec"}');
    const request = await readRequest(['--debug', 'ignored-arg'], {}, input);
    expect(request).toEqual({
      mode: 'json_spec',
      errorFormat: 'json',
      debug: true,
      stdin: Buffer.from('{"describe": "json_spec"}'),
      payload: { source: 'stdin', payload: { describe: 'json_spec' } },
    });
    expect(input.reads).toBe(1);
  });

  it('parses the payload as the run loop does: what the run loop refuses is left to the tool, with stdin kept', async () => {
    const deep = `{"a": ${'['.repeat(1001)}${']'.repeat(1001)}}`;
    for (const text of [deep, '{"describe": "requirements", "n": 1e400}', '{"describe": "requirements"', '[1]']) {
      const request = await readRequest([], { INPUT_DESCRIBE: 'requirements' }, stdin(text));
      expect(request, text.slice(0, 40)).toEqual({ mode: null, errorFormat: 'json', debug: false, stdin: Buffer.from(text) });
    }
  });

  it('a TTY stdin is never read; INPUT_DESCRIBE decides', async () => {
    const input = stdin(null);
    expect((await readRequest([], { INPUT_DESCRIBE: 'requirements' }, input)).mode).toBe('requirements');
    expect(input.reads).toBe(0);
  });

  it('a blank stdin falls through to INPUT_DESCRIBE (file mode)', async () => {
    const request = await readRequest([], { INPUT_DESCRIBE: 'requirements' }, stdin(' \n\t'));
    expect(request).toMatchObject({ mode: 'requirements', stdin: Buffer.from(' \n\t') });
    expect((await readRequest([], {}, stdin(''))).mode).toBeNull();
  });

  it('a null or empty describe key defers to INPUT_DESCRIBE', async () => {
    for (const value of [null, '']) {
      const payload = JSON.stringify({ describe: value, text: 'x' });
      expect((await readRequest([payload], { INPUT_DESCRIBE: 'json_spec' }, stdin(null))).mode).toBe('json_spec');
      expect((await readRequest([payload], {}, stdin(null))).mode).toBeNull();
    }
  });

  it('leaves to the tool whatever the tool reports as an error', async () => {
    const env = { INPUT_DESCRIBE: 'requirements' };
    const cases: [string[], Record<string, string>, string | null][] = [
      [['{"describe": "Requirements"}'], {}, null], // modes are case-sensitive
      [['{"describe": 3}'], {}, null],
      [['{"describe": "requirements"'], env, null], // malformed JSON, even with INPUT_DESCRIBE
      [[], env, '[1, 2]'], // stdin must be an object
      [[], env, 'not json'],
      [[], { INPUT_DESCRIBE: ' requirements' }, null], // never trimmed
      [['--error-format', 'xml', '{"describe": "requirements"}'], {}, null],
      [['{"describe": "requirements"}'], { TWYLT_ERROR_FORMAT: 'yaml' }, null],
    ];
    for (const [argv, environment, input] of cases) {
      expect((await readRequest(argv, environment, stdin(input))).mode, JSON.stringify([argv, environment, input])).toBeNull();
    }
    const invalidUtf8 = await readRequest([], env, stdin(Buffer.from([0x7b, 0xff, 0x7d])));
    expect(invalidUtf8).toMatchObject({ mode: null, stdin: Buffer.from([0x7b, 0xff, 0x7d]) });
  });

  it('service options and an invalid error format stop before stdin is read', async () => {
    for (const argv of [['-h'], ['--help'], ['--version'], ['-v'], ['--debug', '-v'], ['--error-format=bad']]) {
      const input = stdin('{"describe": "requirements"}');
      expect((await readRequest(argv, { INPUT_DESCRIBE: 'requirements' }, input)).mode, argv.join(' ')).toBeNull();
      expect(input.reads).toBe(0);
    }
  });

  it('takes the error format and debug switch as the run loop does', async () => {
    const argv = ['--error-format', 'json', '{"describe": "requirements"}', '--error-format=HUMAN '];
    expect(await readRequest(argv, {}, stdin(null))).toMatchObject({ mode: 'requirements', errorFormat: 'human', debug: false });
    expect((await readRequest([], { TWYLT_ERROR_FORMAT: 'Human', TWYLT_DEBUG: 'Yes' }, stdin(null))).errorFormat).toBe('human');
    expect((await readRequest([], { TWYLT_DEBUG: 'on' }, stdin(null))).debug).toBe(true);
    expect((await readRequest([], { TWYLT_DEBUG: '0', TOOLSPEC_DEBUG: '1' }, stdin(null))).debug).toBe(false);
    expect((await readRequest([], { TOOLSPEC_DEBUG: 'true' }, stdin(null))).debug).toBe(true);
  });
});
