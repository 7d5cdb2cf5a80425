/** The incident record and its sinks, through a real tool process. */
import { readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, probe, stderrParts } from './probe.js';
import { ISO_UTC, UUID, sandbox, type Sandbox } from './sandbox.js';

let box: Sandbox;
beforeAll(() => {
  box = sandbox();
});

const on = (more: Record<string, string> = {}) => ({ TWYLT_GUARDRAILS: '1', TWYLT_WORKSPACE_ROOT: box.workspace, ...more });
const escaping = { op: 'read', path: '../outside/x' };
const FIELDS = ['event', 'schema_version', 'timestamp', 'incident_id', 'tool', 'pid', 'action', 'code', 'requested_path'];

describe('on stderr', () => {
  it('is one compact JSON line, before the error object', async () => {
    const r = await call(probe, { env: on(), payload: escaping });
    const lines = r.stderr.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    const incident = JSON.parse(lines[0]!);
    expect(lines[0]).toBe(JSON.stringify(incident));
    expect(Object.keys(incident)).toEqual(FIELDS);
    expect(incident).toMatchObject({ event: 'workspace_incident', schema_version: '1.0', tool: 'workspace_probe', action: 'deny', code: 'path_outside_workspace', requested_path: '../outside/x' });
    expect(incident.incident_id).toMatch(UUID);
    expect(incident.timestamp).toMatch(ISO_UTC);
    expect(Number.isInteger(incident.pid)).toBe(true);
    expect(JSON.parse(lines[1]!).error.incident_id).toBe(incident.incident_id);
  });

  it('is written in ASCII, and a long requested path is cut to 1024 characters', async () => {
    const path = `../${'é'.repeat(2000)}`;
    const r = await call(probe, { env: on(), payload: { op: 'read', path } });
    const line = r.stderr.split('\n')[0]!;
    expect(/^[\x20-\x7e]*$/.test(line)).toBe(true);
    expect(JSON.parse(line).requested_path).toBe(path.slice(0, 1024));
  });

  it('comes first in human error format too', async () => {
    const r = await call(probe, { env: on(), payload: escaping, args: ['--error-format', 'human'] });
    expect(r.code).toBe(6);
    const [first, ...rest] = r.stderr.split('\n');
    expect(JSON.parse(first!).code).toBe('path_outside_workspace');
    expect(rest.join('\n')).toContain('Policy denied');
  });
});

describe('in the incident log', () => {
  it('appends one line per denial, across runs, in a file only its owner can read', async () => {
    const log = join(box.logs, 'appended.jsonl');
    const first = stderrParts(await call(probe, { env: on({ TWYLT_INCIDENT_LOG: log }), payload: escaping })).error;
    const second = stderrParts(await call(probe, { env: on({ TWYLT_INCIDENT_LOG: log }), payload: { op: 'resolve', path: '~' } })).error;
    const lines = readFileSync(log, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    const incidents = lines.map((line) => JSON.parse(line));
    expect(incidents.map((i) => [i.code, i.incident_id])).toEqual([
      ['path_outside_workspace', first.incident_id],
      ['invalid_path_syntax', second.incident_id],
    ]);
    expect(Object.keys(incidents[0])).toEqual(FIELDS);
    expect(statSync(log).mode & 0o777).toBe(0o600);
  });

  it('that cannot be used fails closed: incident_log_unavailable, on stderr', async () => {
    writeFileSync(join(box.logs, 'target.jsonl'), '');
    symlinkSync(join(box.logs, 'target.jsonl'), join(box.logs, 'link.jsonl'));
    for (const log of [box.logs, join(box.logs, 'link.jsonl'), join(box.logs, 'no-such-dir/x.jsonl')]) {
      // An allowed request, and a denied one: both end with exit 6.
      for (const payload of [{ op: 'resolve', path: '/' }, escaping]) {
        const r = await call(probe, { env: on({ TWYLT_INCIDENT_LOG: log }), payload });
        expect(r.code).toBe(6);
        expect(r.stdout).toBe('');
        const { incidents, error } = stderrParts(r);
        expect(error.code).toBe('incident_log_unavailable');
        expect(incidents).toEqual([expect.objectContaining({ code: 'incident_log_unavailable', incident_id: error.incident_id })]);
      }
    }
    expect(readFileSync(join(box.logs, 'target.jsonl'), 'utf8')).toBe('');
  });
});
