/** The workspace API in a real tool process: every business-path denial, and guardrails off. */
import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, probe, stderrParts } from './probe.js';
import { ISO_UTC, UUID, sandbox, separateMount, type Sandbox } from './sandbox.js';

let box: Sandbox;
const mount = separateMount();
beforeAll(() => {
  box = sandbox();
  const ws = box.workspace;
  mkdirSync(join(ws, 'sub'));
  writeFileSync(join(ws, 'sub/file.txt'), 'inside');
  writeFileSync(join(box.outside, 'secret.txt'), 'SECRET');
  symlinkSync(box.outside, join(ws, 'link'));
  symlinkSync(join(box.outside, 'secret.txt'), join(ws, 'sub/secret-link'));
  writeFileSync(join(ws, 'shared'), 'SECRET');
  linkSync(join(ws, 'shared'), join(box.outside, 'shared-too'));
  execFileSync('mkfifo', [join(ws, 'fifo')]);
  mkdirSync(join(ws, 'tree/a/b'), { recursive: true });
  writeFileSync(join(ws, 'tree/a/b/file'), 'x');
  symlinkSync(box.outside, join(ws, 'tree/a/b/escape'));
});

const on = (more: Record<string, string> = {}) => ({ TWYLT_GUARDRAILS: '1', TWYLT_WORKSPACE_ROOT: box.workspace, ...more });

describe('denials of business paths: exit 6, one incident on stderr, then the error', () => {
  it.each([
    [{ op: 'resolve', path: '' }, 'invalid_path', undefined],
    [{ op: 'resolve', path: 'C:/Windows' }, 'invalid_path_syntax', 'C:/Windows'],
    [{ op: 'resolve', path: 'sub\\file.txt' }, 'invalid_path_syntax', 'sub\\file.txt'],
    [{ op: 'resolve', path: '//server/share' }, 'invalid_path_syntax', '//server/share'],
    [{ op: 'resolve', path: '~/x' }, 'invalid_path_syntax', '~/x'],
    [{ op: 'read', path: '../outside/secret.txt' }, 'path_outside_workspace', '../outside/secret.txt'],
    [{ op: 'read', path: 'sub/../../outside/secret.txt' }, 'path_outside_workspace', 'sub/../../outside/secret.txt'],
    [{ op: 'read', path: 'link/secret.txt' }, 'symlink_forbidden', '/link/secret.txt'],
    [{ op: 'read', path: '/sub/secret-link' }, 'symlink_forbidden', '/sub/secret-link'],
    [{ op: 'read', path: 'shared' }, 'hardlink_forbidden', '/shared'],
    [{ op: 'read', path: 'fifo' }, 'special_file_forbidden', '/fifo'],
    [{ op: 'write', path: '/', text: 'x' }, 'workspace_root_mutation_forbidden', '/'],
    [{ op: 'remove_tree', path: 'tree' }, 'symlink_forbidden', '/tree/a/b/escape'],
  ])('%j -> %s', async (payload, code, requested) => {
    const r = await call(probe, { env: on(), payload });
    expect(r.code).toBe(6);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toContain('SECRET');
    expect(r.stderr).not.toContain(box.base);
    const { incidents, error } = stderrParts(r);
    expect(Object.keys(error)).toEqual(['type', 'source', 'stage', 'message', 'exception', 'code', 'incident_id']);
    expect(error).toMatchObject({ type: 'guardrails_error', source: 'twylt', stage: 'guardrails', message: 'Policy denied', code });
    expect(error.exception.type).toBe('WorkspaceDenied');
    expect(error.exception.message).toContain(code);
    expect(incidents).toHaveLength(1);
    const incident = incidents[0]!;
    expect(incident).toMatchObject({ event: 'workspace_incident', schema_version: '1.0', tool: 'workspace_probe', action: 'deny', code, incident_id: error.incident_id });
    expect(incident.incident_id).toMatch(UUID);
    expect(incident.timestamp).toMatch(ISO_UTC);
    expect(incident.pid).toBeGreaterThan(0);
    expect(incident.pid).not.toBe(process.pid);
    expect(incident.requested_path).toBe(requested);
  });

  it('leaves the tree whole when one entry deep inside is denied', async () => {
    expect(existsSync(join(box.workspace, 'tree/a/b/file'))).toBe(true);
    expect(readFileSync(join(box.outside, 'secret.txt'), 'utf8')).toBe('SECRET');
  });

  // Skipped where /dev/shm is not a mount of its own below /dev (no mount point to cross).
  it.skipIf(!mount)('denies crossing a mount point', async () => {
    const r = await call(probe, { env: { TWYLT_GUARDRAILS: '1', TWYLT_WORKSPACE_ROOT: mount!.root }, payload: { op: 'resolve', path: mount!.virtual } });
    expect(r.code).toBe(6);
    const { incidents, error } = stderrParts(r);
    expect(error.code).toBe('mount_boundary_forbidden');
    expect(incidents[0]!.requested_path).toBe(mount!.virtual);
  });

  it('denies network use when TWYLT_DISABLE_NETWORK is on, without needing a root', async () => {
    const r = await call(probe, { env: { TWYLT_GUARDRAILS: '1', TWYLT_DISABLE_NETWORK: '1' }, payload: { op: 'network' } });
    expect(r.code).toBe(6);
    const { incidents, error } = stderrParts(r);
    expect(error.code).toBe('network_disabled');
    expect(incidents[0]).not.toHaveProperty('requested_path');
  });
});

describe('allowed business paths', () => {
  it('reads through `/x` and `x` alike, answering with virtual paths', async () => {
    for (const path of ['sub/file.txt', '/sub/file.txt', './sub//file.txt']) {
      const r = await call(probe, { env: on(), payload: { op: 'read', path } });
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toEqual({ enabled: true, path: '/sub/file.txt', text: 'inside' });
    }
  });

  it('writes new files and removes clean trees', async () => {
    mkdirSync(join(box.workspace, 'clean/x'), { recursive: true });
    const write = await call(probe, { env: on(), payload: { op: 'write', path: 'sub/new.txt', text: 'new' } });
    expect(write.code).toBe(0);
    expect(readFileSync(join(box.workspace, 'sub/new.txt'), 'utf8')).toBe('new');
    const remove = await call(probe, { env: on(), payload: { op: 'remove_tree', path: '/clean' } });
    expect(remove.code).toBe(0);
    expect(existsSync(join(box.workspace, 'clean'))).toBe(false);
  });

  it('lets the network be used when TWYLT_DISABLE_NETWORK is off or unset', async () => {
    for (const extra of [{ TWYLT_DISABLE_NETWORK: 'off' }, {}] as Record<string, string>[]) {
      const r = await call(probe, { env: on(extra), payload: { op: 'network' } });
      expect([r.code, JSON.parse(r.stdout).text]).toEqual([0, 'network allowed']);
    }
  });

  it('keeps the host root out of business error messages', async () => {
    const r = await call(probe, { env: on(), payload: { op: 'read', path: '/sub/missing.txt' } });
    expect(r.code).toBe(5);
    const { error } = stderrParts(r);
    expect(error.exception.message).toContain("'/sub/missing.txt'");
    expect(r.stderr).not.toContain(box.workspace);
  });
});

describe('guardrails off: exactly no guardrails', () => {
  it.each([
    ['unset', {}],
    ['0', { TWYLT_GUARDRAILS: '0' }],
    ['off', { TWYLT_GUARDRAILS: 'OFF' }],
  ])('TWYLT_GUARDRAILS %s: links are followed, `..` works, relative to the cwd', async (_label, env) => {
    const through = await call(probe, { env, cwd: box.workspace, payload: { op: 'read', path: 'link/secret.txt' } });
    expect(through.stderr).toBe('');
    expect(JSON.parse(through.stdout)).toMatchObject({ enabled: false, text: 'SECRET' });
    const up = await call(probe, { env, cwd: join(box.workspace, 'sub'), payload: { op: 'resolve', path: '../shared' } });
    expect(JSON.parse(up.stdout).path).toBe(join(box.workspace, 'shared'));
    const network = await call(probe, { env: { ...env, TWYLT_DISABLE_NETWORK: '1' }, payload: { op: 'network' } });
    expect(network.code).toBe(0);
  });

  it('a configured root still anchors `/x`, as in the reference', async () => {
    const r = await call(probe, { env: { TWYLT_GUARDRAILS: '0', TWYLT_WORKSPACE_ROOT: box.workspace }, cwd: box.runs, payload: { op: 'read', path: '/link/secret.txt' } });
    expect(JSON.parse(r.stdout)).toMatchObject({ enabled: false, text: 'SECRET' });
  });
});
