/** Each guardrails variable through a real tool process: valid values, invalid values, the empty string. */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, probe, stderrParts } from './probe.js';
import { incidentsIn, sandbox, type Sandbox } from './sandbox.js';

let box: Sandbox;
beforeAll(() => {
  box = sandbox();
  writeFileSync(join(box.workspace, 'file.txt'), 'inside');
  writeFileSync(join(box.base, 'plain-file'), '');
  symlinkSync(box.workspace, join(box.base, 'workspace-link'));
});

const read = { op: 'read', path: '/file.txt' };
const on = (more: Record<string, string> = {}) => ({ TWYLT_GUARDRAILS: '1', TWYLT_WORKSPACE_ROOT: box.workspace, ...more });

/** A configuration error: exit 6, guardrails_error naming the variable, no incident (nothing was denied). */
function expectConfigError(r: Awaited<ReturnType<typeof call>>, variable: string, stage = 'guardrails') {
  expect(r.code).toBe(6);
  expect(r.stdout).toBe('');
  const { incidents, error } = stderrParts(r);
  expect(incidents).toEqual([]);
  expect(error).toMatchObject({ type: 'guardrails_error', source: 'twylt', stage, exception: { type: 'GuardrailsConfigError' } });
  expect(error.exception.message).toContain(variable);
}

/** A denial with an incident on stderr. */
function expectDenied(r: Awaited<ReturnType<typeof call>>, code: string) {
  expect(r.code).toBe(6);
  const { incidents, error } = stderrParts(r);
  expect(error.code).toBe(code);
  expect(incidents.map((i) => i.code)).toEqual([code]);
}

describe('TWYLT_GUARDRAILS', () => {
  it.each(['1', 'true', 'YES', 'On'])('%j turns the policy on', async (value) => {
    const r = await call(probe, { env: on({ TWYLT_GUARDRAILS: value }), payload: read });
    expect(JSON.parse(r.stdout)).toMatchObject({ enabled: true, text: 'inside' });
  });

  it.each(['0', 'false', 'No', 'OFF'])('%j leaves it off', async (value) => {
    const r = await call(probe, { env: { TWYLT_GUARDRAILS: value }, cwd: box.workspace, payload: { op: 'resolve', path: '../x' } });
    expect(JSON.parse(r.stdout)).toEqual({ enabled: false, path: join(box.base, 'x'), text: '' });
  });

  it.each(['', ' ', 'maybe', '2', 'enable'])('%j is a configuration error, exit 6', async (value) => {
    expectConfigError(await call(probe, { env: on({ TWYLT_GUARDRAILS: value }), payload: read }), 'TWYLT_GUARDRAILS');
  });

  it('is not needed for describe, help or version', async () => {
    const env = { TWYLT_GUARDRAILS: 'invalid', TWYLT_DISABLE_NETWORK: 'invalid' };
    for (const args of [['--version'], ['-v'], ['--help']]) {
      expect((await call(probe, { env, args })).code).toBe(0);
    }
    const spec = await call(probe, { env, payload: { describe: 'json_spec' } });
    expect([spec.code, JSON.parse(spec.stdout).name]).toEqual([0, 'workspace_probe']);
    expect((await call(probe, { env: { ...env, INPUT_DESCRIBE: 'brief' }, cwd: box.outside })).code).toBe(0);
  });
});

describe('TWYLT_WORKSPACE_ROOT', () => {
  it('is the root of business paths', async () => {
    const r = await call(probe, { env: on(), cwd: box.outside, payload: read });
    expect(JSON.parse(r.stdout).text).toBe('inside');
  });

  it.each([
    ['unset', undefined, 'workspace_not_configured'],
    ['empty', '', 'workspace_not_configured'],
    ['relative', 'workspace', 'workspace_not_configured'],
    ['the file-system root', '/', 'filesystem_root_forbidden'],
    ['missing', '/nonexistent/twylt-root', 'invalid_workspace_root'],
  ])('%s: denied when business code needs it', async (_label, value, code) => {
    const env: Record<string, string> = { TWYLT_GUARDRAILS: '1' };
    if (value !== undefined) env.TWYLT_WORKSPACE_ROOT = value;
    expectDenied(await call(probe, { env, cwd: box.base, payload: read }), code);
  });

  it('a file or a path through a symlink is no root', async () => {
    for (const root of [join(box.base, 'plain-file'), join(box.base, 'workspace-link')]) {
      expectDenied(await call(probe, { env: on({ TWYLT_WORKSPACE_ROOT: root }), payload: read }), 'invalid_workspace_root');
    }
  });

  it('is not needed by a CLI run whose business code asks nothing of it', async () => {
    const r = await call(probe, { env: { TWYLT_GUARDRAILS: '1' }, payload: { op: 'network' } });
    expect(r.code).toBe(0);
  });
});

describe('TWYLT_ALLOWED_CWD', () => {
  it('lets file mode run below it, and grants no business access there', async () => {
    const cwd = join(box.runs, 'request-1');
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'input.json'), JSON.stringify({ op: 'read', path: '/file.txt' }));
    const r = await call(probe, { env: on({ TWYLT_ALLOWED_CWD: box.runs }), cwd });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(readFileSync(join(cwd, 'output.json'), 'utf8')).text).toBe('inside');

    writeFileSync(join(cwd, 'input.json'), JSON.stringify({ op: 'read', path: `../runs/request-1/input.json` }));
    expectDenied(await call(probe, { env: on({ TWYLT_ALLOWED_CWD: box.runs }), cwd }), 'path_outside_workspace');
  });

  it('empty means unset', async () => {
    const r = await call(probe, { env: on({ TWYLT_ALLOWED_CWD: '' }), payload: read });
    expect(r.code).toBe(0);
  });

  it('relative is a configuration error', async () => {
    expectConfigError(await call(probe, { env: on({ TWYLT_ALLOWED_CWD: 'runs' }), payload: read }), 'TWYLT_ALLOWED_CWD');
  });

  it('a configuration error in file mode is reported at stage transport', async () => {
    writeFileSync(join(box.workspace, 'input.json'), JSON.stringify(read));
    expectConfigError(await call(probe, { env: on({ TWYLT_ALLOWED_CWD: 'runs' }), cwd: box.workspace }), 'TWYLT_ALLOWED_CWD', 'transport');
  });

  it('a missing or linked directory is an invalid root for the transport', async () => {
    const cwd = join(box.runs, 'request-2');
    mkdirSync(cwd);
    for (const allowed of ['/nonexistent/twylt-runs', join(box.base, 'workspace-link')]) {
      const r = await call(probe, { env: on({ TWYLT_ALLOWED_CWD: allowed }), cwd });
      expectDenied(r, 'invalid_workspace_root');
      expect(stderrParts(r).error.stage).toBe('transport');
    }
  });
});

describe('TWYLT_DISABLE_NETWORK', () => {
  it.each([
    ['1', 6],
    ['TRUE', 6],
    ['0', 0],
    ['no', 0],
  ])('%j -> exit %i', async (value, code) => {
    const r = await call(probe, { env: on({ TWYLT_DISABLE_NETWORK: value }), payload: { op: 'network' } });
    expect(r.code).toBe(code);
    if (code === 6) expect(stderrParts(r).error.code).toBe('network_disabled');
  });

  it.each(['', 'blocked'])('%j is a configuration error', async (value) => {
    expectConfigError(await call(probe, { env: on({ TWYLT_DISABLE_NETWORK: value }), payload: { op: 'network' } }), 'TWYLT_DISABLE_NETWORK');
  });
});

describe('TWYLT_INCIDENT_LOG', () => {
  it('receives the incident; stderr keeps only the error object', async () => {
    const log = join(box.logs, 'valid.jsonl');
    const r = await call(probe, { env: on({ TWYLT_INCIDENT_LOG: log }), payload: { op: 'read', path: '../x' } });
    const { incidents, error } = stderrParts(r);
    expect(incidents).toEqual([]);
    expect(incidentsIn(readFileSync(log, 'utf8'))).toEqual([expect.objectContaining({ code: 'path_outside_workspace', incident_id: error.incident_id })]);
  });

  it('empty means stderr', async () => {
    const r = await call(probe, { env: on({ TWYLT_INCIDENT_LOG: '' }), payload: { op: 'read', path: '../x' } });
    expect(stderrParts(r).incidents).toHaveLength(1);
  });

  it.each([
    ['relative', 'incidents.jsonl', 'invalid_incident_log'],
    ['inside the workspace', 'WORKSPACE/incidents.jsonl', 'incident_log_inside_workspace'],
    ['in a missing directory', 'LOGS/missing/incidents.jsonl', 'incident_log_unavailable'],
    ['a directory', 'LOGS', 'incident_log_unavailable'],
  ])('%s: refused, even for an allowed request (fail closed)', async (_label, value, code) => {
    const log = value.replace('WORKSPACE', box.workspace).replace('LOGS', box.logs);
    expectDenied(await call(probe, { env: on({ TWYLT_INCIDENT_LOG: log }), payload: read }), code);
  });
});
