/** The file-transport policy through a real tool process (docs/TWYLT.md section 7). */
import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { call, probe, stderrParts } from './probe.js';
import { sandbox, type Sandbox } from './sandbox.js';

const INPUT = JSON.stringify({ op: 'read', path: '/file.txt' });
const PREVIOUS = 'previous output';

let box: Sandbox;
let request: string;
beforeEach(() => {
  box = sandbox();
  writeFileSync(join(box.workspace, 'file.txt'), 'inside');
  request = join(box.runs, 'request-1', 'node');
  mkdirSync(request, { recursive: true });
});

const hub = () => ({ TWYLT_GUARDRAILS: '1', TWYLT_WORKSPACE_ROOT: box.workspace, TWYLT_ALLOWED_CWD: box.runs });

/** File-mode denial at stage transport; the old output.json is still there and unchanged. */
async function expectTransportDenied(cwd: string, code: string, env: Record<string, string> = hub()) {
  const r = await call(probe, { env, cwd });
  expect(r.code).toBe(6);
  expect(r.stdout).toBe('');
  const { incidents, error } = stderrParts(r);
  expect(error).toMatchObject({ type: 'guardrails_error', source: 'twylt', stage: 'transport', message: 'Transport policy denied', code });
  expect(incidents).toEqual([expect.objectContaining({ code, incident_id: error.incident_id, tool: 'workspace_probe' })]);
  return { incidents, error };
}

describe('allowed working directories', () => {
  it.each([
    ['the workspace root', (b: Sandbox) => b.workspace],
    ['a directory in the workspace', (b: Sandbox) => join(b.workspace, 'sub')],
    ['the allowed cwd', (b: Sandbox) => b.runs],
    ['a nested directory of the allowed cwd', () => request],
  ])('%s', async (_label, where) => {
    const cwd = where(box);
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(cwd, 'input.json'), INPUT);
    writeFileSync(join(cwd, 'output.json'), PREVIOUS);
    const r = await call(probe, { env: hub(), cwd });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
    expect(JSON.parse(readFileSync(join(cwd, 'output.json'), 'utf8'))).toEqual({ enabled: true, path: '/file.txt', text: 'inside' });
  });

  it('a CLI run is not checked for its cwd', async () => {
    const r = await call(probe, { env: hub(), cwd: box.outside, payload: JSON.parse(INPUT) });
    expect(r.code).toBe(0);
  });
});

describe('denied before output.json is removed', () => {
  it('a cwd outside both roots, even one whose name extends a root', async () => {
    for (const cwd of [box.outside, `${box.runs}-other`]) {
      mkdirSync(cwd, { recursive: true });
      writeFileSync(join(cwd, 'input.json'), INPUT);
      writeFileSync(join(cwd, 'output.json'), PREVIOUS);
      const { incidents } = await expectTransportDenied(cwd, 'transport_cwd_or_path_outside_allowed_roots');
      expect(incidents[0]).not.toHaveProperty('requested_path');
      expect(readFileSync(join(cwd, 'output.json'), 'utf8')).toBe(PREVIOUS);
    }
  });

  it('a file-mode run without any root configured', async () => {
    writeFileSync(join(request, 'input.json'), INPUT);
    await expectTransportDenied(request, 'transport_cwd_or_path_outside_allowed_roots', { TWYLT_GUARDRAILS: '1' });
  });

  it('input.json a symlink (to a file inside the workspace, even)', async () => {
    writeFileSync(join(box.workspace, 'real-input.json'), INPUT);
    symlinkSync(join(box.workspace, 'real-input.json'), join(request, 'input.json'));
    writeFileSync(join(request, 'output.json'), PREVIOUS);
    const { incidents } = await expectTransportDenied(request, 'symlink_forbidden');
    expect(incidents[0]!.requested_path).toBe('/request-1/node/input.json');
    expect(readFileSync(join(request, 'output.json'), 'utf8')).toBe(PREVIOUS);
  });

  it('output.json a symlink: its target is left alone', async () => {
    writeFileSync(join(request, 'input.json'), INPUT);
    writeFileSync(join(box.outside, 'victim'), PREVIOUS);
    symlinkSync(join(box.outside, 'victim'), join(request, 'output.json'));
    await expectTransportDenied(request, 'symlink_forbidden');
    expect(readFileSync(join(box.outside, 'victim'), 'utf8')).toBe(PREVIOUS);
  });

  it('output.json a hard link: the other name keeps its content', async () => {
    writeFileSync(join(request, 'input.json'), INPUT);
    writeFileSync(join(box.outside, 'victim'), PREVIOUS);
    linkSync(join(box.outside, 'victim'), join(request, 'output.json'));
    await expectTransportDenied(request, 'hardlink_forbidden');
    expect(readFileSync(join(box.outside, 'victim'), 'utf8')).toBe(PREVIOUS);
    expect(existsSync(join(request, 'output.json'))).toBe(true);
  });

  it('input.json a FIFO (denied, never opened, so nothing hangs)', async () => {
    execFileSync('mkfifo', [join(request, 'input.json')]);
    await expectTransportDenied(request, 'special_file_forbidden');
  });

  it('a hub entering the cwd through a link is fine: the process sees the real directory', async () => {
    symlinkSync(request, join(box.runs, 'shortcut'));
    writeFileSync(join(request, 'input.json'), INPUT);
    const r = await call(probe, { env: hub(), cwd: join(box.runs, 'shortcut') });
    expect(r.code).toBe(0);
  });
});
