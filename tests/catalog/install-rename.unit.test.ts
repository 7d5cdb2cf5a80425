/**
 * The rename race of installEnv, from the source (docs/mutation.md): the staging folder's
 * rename into place fails with the codes other systems give (EEXIST where Linux gives
 * ENOTEMPTY, rename(2)) or with any other error. Linux gives neither here, so rename is the
 * real one except in the row that makes it fail as such a system would.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { type EnvPlan, installEnv } from '../../packages/twylt/src/toolset/catalog/install.js';

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return { ...real, rename: vi.fn(real.rename) };
});

const scratch = mkdtempSync(join(tmpdir(), 'twylt-install-rename-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
afterEach(() => vi.mocked(rename).mockReset());

/** A fresh environments folder and a plan with nothing to run (no command, no links): only the rename of its empty staging folder. */
function emptyPlan(): { envs: string; plan: EnvPlan } {
  const envs = mkdtempSync(join(scratch, 'envs-'));
  return { envs, plan: { installer: 'npm', dir: join(envs, 'npm-env'), command: [], env: {}, links: {} } };
}

/** The rename fails with `code`, after another scan put its environment in place when `theirs`. */
function renameFails(code: string, theirs: boolean): void {
  vi.mocked(rename).mockImplementationOnce(async (from, to) => {
    if (theirs) {
      mkdirSync(String(to));
      writeFileSync(join(String(to), 'theirs'), '');
    }
    throw Object.assign(new Error(`${code}: planted, rename '${String(from)}' -> '${String(to)}'\nsecond line`), { code });
  });
}

describe('installEnv: the rename into place fails', () => {
  it('EEXIST (as other systems say ENOTEMPTY) while another scan\'s environment is in place: that one is used, the staging folder removed', async () => {
    const { envs, plan } = emptyPlan();
    renameFails('EEXIST', true);
    expect(await installEnv(plan, envs)).toEqual({ ok: true, reused: false });
    expect(vi.mocked(rename)).toHaveBeenCalledTimes(1);
    expect(readdirSync(plan.dir)).toEqual(['theirs']);
    expect(readdirSync(envs)).toEqual(['npm-env']);
  });

  it('EEXIST with no environment in place: the error, first line', async () => {
    const { envs, plan } = emptyPlan();
    renameFails('EEXIST', false);
    const outcome = await installEnv(plan, envs);
    expect(outcome).toEqual({ ok: false, reason: expect.stringMatching(/^EEXIST: planted, rename '.*\.staging-[0-9a-f]{12}' -> '.*npm-env'$/) });
    expect(readdirSync(envs)).toEqual([]);
  });

  for (const code of ['EXDEV', 'EACCES', 'EIO']) {
    it(`${code}, even with an environment in place: the error, first line (only a rename that lost the race is taken for done)`, async () => {
      const { envs, plan } = emptyPlan();
      renameFails(code, true);
      expect(await installEnv(plan, envs)).toEqual({ ok: false, reason: expect.stringMatching(new RegExp(`^${code}: planted, rename '.*\\.staging-[0-9a-f]{12}' -> '.*npm-env'$`)) });
      expect(readdirSync(envs)).toEqual(['npm-env']);
    });
  }

  it('the real rename: the environment is the staging folder, renamed', async () => {
    const { envs, plan } = emptyPlan();
    expect(await installEnv(plan, envs)).toEqual({ ok: true, reused: false });
    expect(readdirSync(envs)).toEqual(['npm-env']);
  });
});
