/**
 * Integers beyond 2^53 on every transport (ADR 0021): one a double cannot hold is a transport
 * error (exit 4, InexactInteger, the path named), never another integer handed to biz; one a
 * double holds comes back with its own digits. Runs against built files too (tests/build/).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { errorOf, fixture, run, type Finished } from '../support/process.js';

// A Zod tool with an integer field (inner.a, echoed as inner_a) and a z.json() field (extra, echoed).
const tool = fixture('py_shapes_twin');
const LOSSY = '{"name": "a", "headers": {}, "extra": {"ids": [1, -12345678901234567890]}, "inner": {"a": 9007199254740993}}';
const EXACT = '{"name": "a", "headers": {}, "extra": [9007199254740992, -100000000000000000000, 0.1], "inner": {"a": 1152921504606846976}}';
const EXACT_OUT = '{\n  "name": "a",\n  "header_count": 0,\n  "meta": null,\n  "items": [],\n  "extra": [\n    9007199254740992,\n    -100000000000000000000,\n    0.1\n  ],\n  "inner_a": 1152921504606846976\n}';

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'twylt-run-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function refused(result: Finished, where: string): void {
  expect(result.code).toBe(4);
  expect(result.stdout).toBe('');
  expect(errorOf(result)).toMatchObject({ type: 'protocol_error', stage: 'transport' });
  expect(errorOf(result).exception).toEqual({
    type: 'InexactInteger',
    message:
      `The JSON on ${where} has the integer -12345678901234567890 at extra.ids[1], which a JavaScript number cannot hold exactly ` +
      '(numbers are 64-bit floats: integers beyond 2^53 lose digits, this one would become -12345678901234567168); ' +
      'send it as a string, or use a tool runtime with exact integers',
  });
}

describe('integers beyond 2^53', () => {
  it('one a double cannot hold is refused on the command line and stdin', async () => {
    refused(await run([...tool, LOSSY]), 'the command-line argument');
    refused(await run(tool, { input: LOSSY }), 'stdin');
  });
  it('one a double cannot hold is refused in input.json, and no output.json is written', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'input.json'), LOSSY);
    refused(await run(tool, { cwd: dir }), 'input.json');
    expect(existsSync(join(dir, 'output.json'))).toBe(false);
    expect(readdirSync(dir)).toEqual(['input.json']);
  });
  it('ones a double holds come back with their own digits, on every transport', async () => {
    expect(await run([...tool, EXACT])).toMatchObject({ code: 0, stderr: '', stdout: `${EXACT_OUT}\n` });
    expect(await run(tool, { input: EXACT })).toMatchObject({ code: 0, stderr: '', stdout: `${EXACT_OUT}\n` });
    const dir = freshDir();
    writeFileSync(join(dir, 'input.json'), EXACT);
    expect(await run(tool, { cwd: dir })).toMatchObject({ code: 0, stderr: '', stdout: '' });
    expect(readFileSync(join(dir, 'output.json'), 'utf8')).toBe(EXACT_OUT);
  });
  it('digits inside strings and fractions are not integers', async () => {
    const text = '{"name": "12345678901234567890", "headers": {"id": "9007199254740993"}, "extra": 0.90071992547409931}';
    const r = await run([...tool, text]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: '12345678901234567890', extra: 0.9007199254740993 });
  });
});
