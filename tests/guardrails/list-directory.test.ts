/**
 * examples/list_directory under the configuration an agent hub gives a Python reference
 * tool: the same exit codes, deny codes and incident fields as the reference's
 * list_directory would produce (its behaviour read from the reference's source).
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { example } from '../support/process.js';
import { call, stderrParts } from './probe.js';
import { incidentsIn, sandbox, type Sandbox } from './sandbox.js';


/** The fields of a reference incident, in its order. */
const FIELDS = ['event', 'schema_version', 'timestamp', 'incident_id', 'tool', 'pid', 'action', 'code', 'requested_path'];

let box: Sandbox;
let log: string;
beforeAll(() => {
  box = sandbox();
  log = join(box.logs, 'incidents.jsonl');
  const ws = box.workspace;
  mkdirSync(join(ws, 'clean/sub'), { recursive: true });
  writeFileSync(join(ws, 'clean/b.txt'), 'b');
  writeFileSync(join(ws, 'clean/a.txt'), 'a');
  mkdirSync(join(ws, 'linked'));
  writeFileSync(join(ws, 'linked/file.txt'), 'x');
  symlinkSync(box.outside, join(ws, 'linked/escape'));
  symlinkSync(box.outside, join(ws, 'link-dir'));
});

const hub = () => ({
  TWYLT_GUARDRAILS: '1',
  TWYLT_WORKSPACE_ROOT: box.workspace,
  TWYLT_ALLOWED_CWD: box.runs,
  TWYLT_DISABLE_NETWORK: '1',
  TWYLT_INCIDENT_LOG: log,
});

describe('list_directory under a hub configuration', () => {
  const tool = example('list_directory');

  it.each(['/clean', 'clean', './clean/'])('lists %j inside the workspace, exit 0', async (path) => {
    const r = await call(tool, { env: hub(), cwd: box.outside, payload: { path } });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(r.stdout)).toEqual({
      entries: [
        { name: 'a.txt', is_dir: false },
        { name: 'b.txt', is_dir: false },
        { name: 'sub', is_dir: true },
      ],
    });
  });

  it.each([
    ['../outside', 'path_outside_workspace', '../outside'],
    ['clean/../../outside', 'path_outside_workspace', 'clean/../../outside'],
    ['link-dir', 'symlink_forbidden', '/link-dir'],
    ['linked', 'symlink_forbidden', '/linked/escape'],
    ['~', 'invalid_path_syntax', '~'],
    ['C:\\', 'invalid_path_syntax', 'C:\\'],
    ['', 'invalid_path', undefined],
  ])('%j -> exit 6, %s, incident in the log', async (path, code, requested) => {
    const before = incidentsIn(safeRead(log)).length;
    const r = await call(tool, { env: hub(), payload: { path } });
    expect(r.code).toBe(6);
    expect(r.stdout).toBe('');
    const { incidents, error } = stderrParts(r);
    expect(incidents).toEqual([]); // they go to the log
    expect(error).toMatchObject({ type: 'guardrails_error', source: 'twylt', stage: 'guardrails', message: 'Policy denied', code });
    const logged = incidentsIn(safeRead(log)).slice(before);
    expect(logged).toHaveLength(1);
    const incident = logged[0]!;
    expect(Object.keys(incident)).toEqual(requested === undefined ? FIELDS.slice(0, -1) : FIELDS);
    expect(incident).toMatchObject({ event: 'workspace_incident', schema_version: '1.0', tool: 'list_directory', action: 'deny', code, incident_id: error.incident_id });
    expect(incident.requested_path).toBe(requested);
  });

  it('a missing directory is an execution error that does not name the host root', async () => {
    const r = await call(tool, { env: hub(), payload: { path: '/missing' } });
    expect(r.code).toBe(5);
    expect(stderrParts(r).error.type).toBe('execution_error');
    expect(r.stderr).not.toContain(box.workspace);
  });

  it('runs in file mode below the allowed cwd', async () => {
    const cwd = join(box.runs, 'request-1');
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'input.json'), JSON.stringify({ path: '/clean' }));
    const r = await call(tool, { env: hub(), cwd });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
    expect(JSON.parse(readFileSync(join(cwd, 'output.json'), 'utf8')).entries).toHaveLength(3);
  });

  it('is denied in file mode outside the allowed roots, at stage transport', async () => {
    writeFileSync(join(box.outside, 'input.json'), JSON.stringify({ path: '/clean' }));
    const r = await call(tool, { env: hub(), cwd: box.outside });
    expect(r.code).toBe(6);
    expect(stderrParts(r).error).toMatchObject({ stage: 'transport', message: 'Transport policy denied', code: 'transport_cwd_or_path_outside_allowed_roots' });
  });

  it('with guardrails off lists relative to the cwd, following links, as before', async () => {
    const r = await call(tool, { env: { TWYLT_GUARDRAILS: '0' }, cwd: box.workspace, payload: { path: 'linked' } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).entries.map((e: { name: string }) => e.name)).toEqual(['escape', 'file.txt']);
  });
});

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
