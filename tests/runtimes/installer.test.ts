/**
 * scripts/runtimes.mjs as a user runs it: list, path and its errors, against an empty cache
 * (TWYLT_RUNTIMES_DIR), so nothing is downloaded here; CI's .ci/run does the install.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/process.js';
import { RUNTIME_NAMES } from '../support/runtimes.js';

const empty = mkdtempSync(join(tmpdir(), 'twylt-runtimes-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));
const runtimes = (args: string[]) => run([process.execPath, join(ROOT, 'scripts/runtimes.mjs'), ...args], { env: { TWYLT_RUNTIMES_DIR: empty } });

describe('scripts/runtimes.mjs', () => {
  it('list: one line per pinned runtime, name, version, path in the cache, missing', async () => {
    const listed = await runtimes(['list']);
    expect(listed.code).toBe(0);
    const rows = listed.stdout.trimEnd().split('\n').map((line) => line.split('\t'));
    expect(rows.map(([name]) => name)).toEqual(RUNTIME_NAMES);
    expect(RUNTIME_NAMES).toEqual(['node22', 'node24', 'node26', 'bun', 'deno']);
    for (const [name, version, path, state] of rows) {
      expect(version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(path!.startsWith(join(empty, `${name}-${version}`))).toBe(true);
      expect(state).toBe('missing');
    }
  });

  it('path: exit 1 and how to install, when the runtime is not there', async () => {
    const path = await runtimes(['path', 'bun']);
    expect(path).toMatchObject({ code: 1, stdout: '' });
    expect(path.stderr).toMatch(/^runtimes: bun \d+\.\d+\.\d+ is not installed: node scripts\/runtimes\.mjs install bun\n$/);
  });

  it('an unknown runtime or command: exit 2, one line, no stack trace', async () => {
    expect(await runtimes(['path', 'node18'])).toEqual({ code: 2, signal: null, stdout: '', stderr: `runtimes: unknown runtime "node18" (known: ${RUNTIME_NAMES.join(', ')})\n` });
    expect(await runtimes(['install', 'node18'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^runtimes: unknown runtime "node18"/) });
    expect(await runtimes(['frobnicate'])).toEqual({ code: 2, signal: null, stdout: '', stderr: 'runtimes: usage: node scripts/runtimes.mjs install [NAME...] | path NAME | list\n' });
  });
});
