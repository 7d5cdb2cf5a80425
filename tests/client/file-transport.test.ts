/**
 * The file transport in a directory the caller names (issue 17): input.json is created
 * afresh, never written through a link or into whatever entry has the name, and
 * output.json is read only when it is a regular file, never through a link.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidOutputError, OutputTooLargeError, SpawnError, TwyltClient } from '../../packages/twylt/src/client/index.js';

const misbehave = fileURLToPath(new URL('./fixtures/misbehave.mjs', import.meta.url));
const rogue = fileURLToPath(new URL('../fixtures/robustness/rogue.mjs', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'twylt-file-transport-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A named exchange directory, and a file outside it that holds a secret. */
function setting(label: string): { dir: string; outside: string } {
  const base = mkdtempSync(join(scratch, `${label}-`));
  const dir = join(base, 'exchange');
  mkdirSync(dir);
  const outside = join(base, 'outside.json');
  writeFileSync(outside, '{"secret": "kept"}');
  return { dir, outside };
}

describe('input.json', () => {
  it('a link named input.json is replaced, the file it points to is not written', async () => {
    const { dir, outside } = setting('input-link');
    symlinkSync(outside, join(dir, 'input.json'));
    const echo = new TwyltClient([process.execPath, misbehave], { env: { MISBEHAVE: 'echo' } });
    const { output } = await echo.call<{ echo: unknown }>({ a: 1 }, { transport: 'file', fileDir: dir });
    expect(output.echo).toEqual({ a: 1 });
    expect(readFileSync(outside, 'utf8')).toBe('{"secret": "kept"}');
    expect(lstatSync(join(dir, 'input.json')).isFile()).toBe(true);
  });

  it('an entry that cannot be replaced (a directory) is refused before the tool runs', async () => {
    const { dir } = setting('input-dir');
    mkdirSync(join(dir, 'input.json'));
    const count = join(scratch, 'count-input-dir');
    const echo = new TwyltClient([process.execPath, misbehave], { env: { MISBEHAVE: 'echo', COUNT_FILE: count } });
    const error = await echo.call({ a: 1 }, { transport: 'file', fileDir: dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpawnError);
    expect((error as SpawnError).message).toBe(`cannot use ${dir} for the file transport: input.json cannot be created there (EEXIST)`);
    expect(existsSync(count)).toBe(false);
  });
});

describe('output.json', () => {
  it('a link is not followed: InvalidOutputError, the linked file is not read', async () => {
    const { dir, outside } = setting('output-link');
    const tool = new TwyltClient([process.execPath, rogue, 'output_symlink', outside]);
    for (const fileDir of [dir, undefined]) {
      const error = await tool.call({}, { transport: 'file', fileDir }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidOutputError);
      expect((error as InvalidOutputError).source).toBe('output.json');
      expect((error as InvalidOutputError).message).toBe('tool succeeded but its output.json is not JSON: it is a symbolic link, which the client does not follow');
      expect((error as InvalidOutputError).message).not.toContain('secret');
    }
  });

  it('a directory: InvalidOutputError, it is not a regular file', async () => {
    const error = await new TwyltClient([process.execPath, rogue, 'output_directory']).call({}, { transport: 'file' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOutputError);
    expect((error as InvalidOutputError).message).toBe('tool succeeded but its output.json is not JSON: it is not a regular file');
  });
});

describe('output.json beyond the output limit', () => {
  it('is refused unread with OutputTooLargeError, as stdout would be', async () => {
    const echo = new TwyltClient([process.execPath, misbehave], { env: { MISBEHAVE: 'echo' }, maxOutputBytes: 1000 });
    // Within the limit it is read; one payload larger than the limit makes a larger output.json.
    await expect(echo.call({ text: 'a'.repeat(100) }, { transport: 'file' })).resolves.toMatchObject({ output: { echo: { text: 'a'.repeat(100) } } });
    const error = await echo.call({ text: 'a'.repeat(2000) }, { transport: 'file' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutputTooLargeError);
    expect((error as OutputTooLargeError).stream).toBe('output.json');
    expect((error as OutputTooLargeError).message).toBe('tool wrote more than 1000 bytes to output.json');
  });
});
