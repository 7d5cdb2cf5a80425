/**
 * The policy in-process, through the same entry points the run loop and business code use
 * (startGuardrails, then the `twylt/guardrails` API). The subprocess tests beside this file
 * prove the same facts end to end through real tool executables.
 */
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, readFileSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TwyltError } from '../../packages/twylt/src/protocol/errors.js';
import { checkNetwork, isGuardrailsError, workspace } from '../../packages/twylt/src/guardrails/index.js';
import { pathSyntaxProblem } from '../../packages/twylt/src/guardrails/paths.js';
import { forgetGuardrails } from '../../packages/twylt/src/guardrails/requested.js';
import { startGuardrails, type RunContext } from '../../packages/twylt/src/guardrails/run-hooks.js';
import { ISO_UTC, UUID, incidentsIn, sandbox, separateMount } from './sandbox.js';

const mount = separateMount();

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

async function start(env: Record<string, string>, cwd = process.cwd(), transport?: RunContext['transport']) {
  const stderr = new Capture();
  const hooks = await startGuardrails({ env, toolName: 'probe', cwd, stderr, transport });
  return { hooks, stderr };
}

/** Runs `act`, which must be denied, and returns the error and the incidents written to stderr. */
function denied(act: () => unknown, stderr: Capture): { error: TwyltError; incidents: Record<string, any>[] } {
  const before = stderr.text.length;
  try {
    act();
  } catch (error) {
    if (!(error instanceof TwyltError)) throw error;
    return { error, incidents: incidentsIn(stderr.text.slice(before)) };
  }
  throw new Error('expected a denial');
}

const on = (root: string, more: Record<string, string> = {}) => ({ TWYLT_GUARDRAILS: '1', TWYLT_WORKSPACE_ROOT: root, ...more });

describe('configuration', () => {
  it('accepts the boolean spellings in any case, blanks around them ignored', async () => {
    const box = sandbox();
    for (const value of ['1', 'true', 'TRUE', 'Yes', 'on', ' on ', 'oN']) {
      expect(await start(on(box.workspace, { TWYLT_GUARDRAILS: value }))).toMatchObject({ hooks: expect.any(Object) });
    }
    for (const value of ['0', 'false', 'False', 'NO', 'off', ' 0\n']) {
      expect((await start({ TWYLT_GUARDRAILS: value })).hooks).toBeNull();
    }
  });

  it('rejects anything else, the empty string included, as a guardrails error', async () => {
    for (const value of ['', ' ', 'maybe', '2', 'enabled', 'y', 'n', 'truee']) {
      const failure = await start({ TWYLT_GUARDRAILS: value }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(TwyltError);
      const object = (failure as TwyltError).toObject();
      expect(object).toMatchObject({ type: 'guardrails_error', stage: 'guardrails', message: 'Policy denied' });
      expect(object.exception?.type).toBe('GuardrailsConfigError');
      expect(object.exception?.message).toContain('TWYLT_GUARDRAILS');
      expect(object.code).toBeUndefined();
    }
  });

  it('reports a configuration error at stage transport in file mode', async () => {
    const failure = (await start({ TWYLT_GUARDRAILS: 'maybe' }, undefined, 'file').catch((e: unknown) => e)) as TwyltError;
    expect(failure.toObject()).toMatchObject({ stage: 'transport', message: 'Transport policy denied' });
    expect(failure.exitCode).toBe(6);
  });

  it('checks TWYLT_DISABLE_NETWORK and TWYLT_ALLOWED_CWD only with guardrails on', async () => {
    for (const env of [{ TWYLT_DISABLE_NETWORK: '' }, { TWYLT_DISABLE_NETWORK: 'nope' }, { TWYLT_ALLOWED_CWD: 'relative/dir' }] as Record<string, string>[]) {
      await expect(start({ TWYLT_GUARDRAILS: '1', ...env })).rejects.toThrow(TwyltError);
      await expect(start({ TWYLT_GUARDRAILS: '0', ...env })).resolves.toMatchObject({ hooks: null });
    }
  });
});

describe('path syntax', () => {
  it.each([
    ['', 'invalid_path'],
    ['a\0b', 'invalid_path'],
    ['a\\b', 'invalid_path_syntax'],
    ['C:/Windows', 'invalid_path_syntax'],
    ['c:', 'invalid_path_syntax'],
    ['//server/share', 'invalid_path_syntax'],
    ['~', 'invalid_path_syntax'],
    ['~root/x', 'invalid_path_syntax'],
    ['..', 'path_outside_workspace'],
    ['../x', 'path_outside_workspace'],
    ['a/../../x', 'path_outside_workspace'],
    ['/a/..', 'path_outside_workspace'],
    ['/', null],
    ['.', null],
    ['a/./b//c/', null],
    ['...', null],
    ['a..b', null],
    ['/~x', null],
  ])('%j -> %s', (value, code) => {
    expect(pathSyntaxProblem(value, false)).toBe(code);
  });

  it('refuses device names and trailing dots on Windows', () => {
    for (const value of ['NUL', 'a/con.txt', 'lpt1', 'name.', 'name ']) expect(pathSyntaxProblem(value, true)).toBe('invalid_path_syntax');
    expect(pathSyntaxProblem('console/x', true)).toBeNull();
  });
});

describe('the workspace API with guardrails on', () => {
  it('maps `/x` and `x` into the root and denies escapes with an incident on stderr', async () => {
    const box = sandbox();
    const { stderr } = await start(on(box.workspace));
    const ws = workspace();
    expect(ws.enabled).toBe(true);
    expect(ws.resolve('/sub/file')).toBe(join(box.workspace, 'sub/file'));
    expect(ws.resolve('sub/file')).toBe(join(box.workspace, 'sub/file'));
    expect(ws.resolve('/')).toBe(box.workspace);
    expect(ws.virtual(join(box.workspace, 'sub/file'))).toBe('/sub/file');

    const { error, incidents } = denied(() => ws.resolve('sub/../../outside'), stderr);
    expect(isGuardrailsError(error)).toBe(true);
    expect(error.toObject()).toMatchObject({
      type: 'guardrails_error',
      source: 'twylt',
      stage: 'guardrails',
      message: 'Policy denied',
      exception: { type: 'WorkspaceDenied' },
      code: 'path_outside_workspace',
      incident_id: error.incidentId,
    });
    expect(incidents).toHaveLength(1);
    const [incident] = incidents;
    expect(Object.keys(incident!)).toEqual(['event', 'schema_version', 'timestamp', 'incident_id', 'tool', 'pid', 'action', 'code', 'requested_path']);
    expect(incident).toMatchObject({ event: 'workspace_incident', schema_version: '1.0', tool: 'probe', pid: process.pid, action: 'deny', code: 'path_outside_workspace', requested_path: 'sub/../../outside' });
    expect(incident!.incident_id).toMatch(UUID);
    expect(incident!.incident_id).toBe(error.incidentId);
    expect(incident!.timestamp).toMatch(ISO_UTC);
    expect(Math.abs(Date.parse(incident!.timestamp) - Date.now())).toBeLessThan(60_000);
    expect(stderr.text.endsWith('}\n')).toBe(true);
  });

  it('never writes an unusable value (empty, NUL) into the incident', async () => {
    const box = sandbox();
    const { stderr } = await start(on(box.workspace));
    for (const value of ['', 'a\0b']) {
      const { error, incidents } = denied(() => workspace().resolve(value), stderr);
      expect(error.code).toBe('invalid_path');
      expect(incidents[0]).not.toHaveProperty('requested_path');
    }
  });

  it('inspects without following links: symlink, hard link, special file, outside', async () => {
    const box = sandbox();
    mkdirSync(join(box.workspace, 'dir'));
    writeFileSync(join(box.workspace, 'dir/file'), 'x');
    symlinkSync(box.outside, join(box.workspace, 'dir/link'));
    writeFileSync(join(box.workspace, 'shared'), 'x');
    linkSync(join(box.workspace, 'shared'), join(box.outside, 'shared-too'));
    execFileSync('mkfifo', [join(box.workspace, 'fifo')]);
    const { stderr } = await start(on(box.workspace));
    const ws = workspace();

    expect(ws.resolve('dir/file')).toBe(join(box.workspace, 'dir/file'));
    expect(ws.resolve('dir/not-yet/deeper')).toBe(join(box.workspace, 'dir/not-yet/deeper'));
    const cases: [string, string, string][] = [
      ['dir/link', 'symlink_forbidden', '/dir/link'],
      ['/dir/link/beyond', 'symlink_forbidden', '/dir/link/beyond'],
      ['shared', 'hardlink_forbidden', '/shared'],
      ['fifo', 'special_file_forbidden', '/fifo'],
    ];
    for (const [value, code, requested] of cases) {
      const { error, incidents } = denied(() => ws.resolve(value), stderr);
      expect(error.code).toBe(code);
      expect(incidents[0]).toMatchObject({ code, requested_path: requested });
    }
    // A link as the last component may be accepted on request (to remove the link itself).
    expect(ws.inspect(join(box.workspace, 'dir/link'), { allowLeafLink: true })).toBe(join(box.workspace, 'dir/link'));
    expect(denied(() => ws.inspect(join(box.workspace, 'dir/link/x'), { allowLeafLink: true }), stderr).error.code).toBe('symlink_forbidden');
    // Host paths outside the root, including lexical escapes, are not echoed.
    for (const host of [box.outside, join(box.workspace, '../outside'), `${box.workspace}-other`]) {
      const { error, incidents } = denied(() => ws.inspect(host), stderr);
      expect(error.code).toBe('path_outside_workspace');
      expect(incidents[0]).not.toHaveProperty('requested_path');
    }
  });

  // Skipped where /dev/shm is not a mount of its own below /dev (no mount point to cross).
  it.skipIf(!mount)('denies crossing a mount point', async () => {
    const { stderr } = await start(on(mount!.root));
    const { error, incidents } = denied(() => workspace().resolve(mount!.virtual), stderr);
    expect(error.code).toBe('mount_boundary_forbidden');
    expect(incidents[0]!.requested_path).toBe(mount!.virtual);
  });

  it('protects the root and walks a whole tree before a recursive change', async () => {
    const box = sandbox();
    mkdirSync(join(box.workspace, 'tree/a/b'), { recursive: true });
    writeFileSync(join(box.workspace, 'tree/a/b/file'), 'x');
    const { stderr } = await start(on(box.workspace));
    const ws = workspace();
    for (const value of ['/', '.', './', '/./']) {
      const { error, incidents } = denied(() => ws.protectRoot(ws.resolve(value)), stderr);
      expect(error.code).toBe('workspace_root_mutation_forbidden');
      expect(incidents[0]!.requested_path).toBe('/');
    }
    ws.protectRoot(ws.resolve('tree'));
    ws.inspectTree(ws.resolve('tree'));
    symlinkSync('/etc', join(box.workspace, 'tree/a/b/deep-link'));
    const { error, incidents } = denied(() => ws.inspectTree(ws.resolve('tree')), stderr);
    expect(error.code).toBe('symlink_forbidden');
    expect(incidents[0]!.requested_path).toBe('/tree/a/b/deep-link');
  });

  it('denies network use only when TWYLT_DISABLE_NETWORK is true', async () => {
    const box = sandbox();
    await start(on(box.workspace, { TWYLT_DISABLE_NETWORK: 'off' }));
    expect(() => checkNetwork()).not.toThrow();
    // No workspace root is needed for the network check.
    const { stderr } = await start({ TWYLT_GUARDRAILS: 'on', TWYLT_DISABLE_NETWORK: 'Yes' });
    const { error, incidents } = denied(() => checkNetwork(), stderr);
    expect(error.code).toBe('network_disabled');
    expect(incidents[0]).not.toHaveProperty('requested_path');
  });

  it('needs a usable root: absolute, existing, real directories all the way, not /', async () => {
    const box = sandbox();
    writeFileSync(join(box.base, 'a-file'), 'x');
    symlinkSync(box.workspace, join(box.base, 'link-to-workspace'));
    const cases: [Record<string, string>, string][] = [
      [{ TWYLT_GUARDRAILS: '1' }, 'workspace_not_configured'],
      [{ TWYLT_GUARDRAILS: '1', TWYLT_WORKSPACE_ROOT: '' }, 'workspace_not_configured'],
      [on('relative/root'), 'workspace_not_configured'],
      [on('/'), 'filesystem_root_forbidden'],
      [on(join(box.base, 'missing')), 'invalid_workspace_root'],
      [on(join(box.base, 'a-file')), 'invalid_workspace_root'],
      [on(join(box.base, 'link-to-workspace')), 'invalid_workspace_root'],
    ];
    for (const [env, code] of cases) {
      const { stderr } = await start(env);
      const { error, incidents } = denied(() => workspace(), stderr);
      expect([error.code, incidents[0]!.code]).toEqual([code, code]);
    }
  });
});

describe('the incident log', () => {
  it('appends one line per denial to the log and nothing to stderr', async () => {
    const box = sandbox();
    const log = join(box.logs, 'incidents.jsonl');
    const { stderr } = await start(on(box.workspace, { TWYLT_INCIDENT_LOG: log }));
    const first = denied(() => workspace().resolve('../a'), stderr).error;
    const second = denied(() => workspace().resolve('~b'), stderr).error;
    expect(stderr.text).toBe('');
    const lines = readFileSync(log, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    const incidents = lines.slice(0, -1).map((line) => JSON.parse(line));
    expect(incidents.map((i) => [i.code, i.incident_id, i.requested_path])).toEqual([
      ['path_outside_workspace', first.incidentId, '../a'],
      ['invalid_path_syntax', second.incidentId, '~b'],
    ]);
    expect(statSync(log).mode & 0o777).toBe(0o600);
  });

  it('refuses unusable logs, reporting on stderr', async () => {
    const box = sandbox();
    mkdirSync(join(box.logs, 'a-directory'));
    writeFileSync(join(box.logs, 'target'), '');
    symlinkSync(join(box.logs, 'target'), join(box.logs, 'link.jsonl'));
    writeFileSync(join(box.logs, 'linked.jsonl'), '');
    linkSync(join(box.logs, 'linked.jsonl'), join(box.logs, 'linked-too.jsonl'));
    symlinkSync(box.logs, join(box.base, 'logs-link'));
    execFileSync('mkfifo', [join(box.logs, 'fifo')]);
    const cases: [string, string][] = [
      ['relative.jsonl', 'invalid_incident_log'],
      [join(box.workspace, 'in-workspace.jsonl'), 'incident_log_inside_workspace'],
      [join(box.base, 'logs-link', 'x.jsonl'), 'invalid_incident_log'],
      [join(box.logs, 'missing-dir', 'x.jsonl'), 'incident_log_unavailable'],
      [join(box.logs, 'a-directory'), 'incident_log_unavailable'],
      [join(box.logs, 'link.jsonl'), 'incident_log_unavailable'],
      [join(box.logs, 'linked.jsonl'), 'incident_log_unavailable'],
      [join(box.logs, 'fifo'), 'incident_log_unavailable'],
    ];
    for (const [log, code] of cases) {
      const { stderr } = await start(on(box.workspace, { TWYLT_INCIDENT_LOG: log }));
      // Even a run that asks for nothing forbidden fails closed: there is nowhere to record.
      const { error, incidents } = denied(() => workspace(), stderr);
      expect([error.code, incidents.map((i) => i.code)]).toEqual([code, [code]]);
      expect(readFileSync(join(box.logs, 'target'), 'utf8')).toBe('');
    }
  });

  it('fails closed when the log breaks after it was checked, keeping the original code', async () => {
    const box = sandbox();
    const log = join(box.logs, 'incidents.jsonl');
    const { stderr } = await start(on(box.workspace, { TWYLT_INCIDENT_LOG: log }));
    const ws = workspace(); // checks and creates the log
    unlinkSync(log);
    writeFileSync(join(box.logs, 'other'), '');
    symlinkSync(join(box.logs, 'other'), log);
    const { error, incidents } = denied(() => ws.resolve('../x'), stderr);
    expect(error.toObject()).toMatchObject({ code: 'incident_log_unavailable', original_code: 'path_outside_workspace', incident_id: error.incidentId });
    expect(incidents).toEqual([expect.objectContaining({ code: 'incident_log_unavailable', original_code: 'path_outside_workspace', incident_id: error.incidentId, requested_path: '../x' })]);
    expect(readFileSync(join(box.logs, 'other'), 'utf8')).toBe('');
  });
});

describe('the workspace API with guardrails off', () => {
  it('resolves against the cwd (or a configured root) and denies nothing', async () => {
    const box = sandbox();
    symlinkSync(box.outside, join(box.workspace, 'link'));
    await start({ TWYLT_GUARDRAILS: '0', TWYLT_DISABLE_NETWORK: '1' }, box.runs);
    let ws = workspace();
    expect(ws.enabled).toBe(false);
    expect(ws.root).toBeNull();
    expect(ws.resolve('a/b')).toBe(join(box.runs, 'a/b'));
    expect(ws.resolve('../x')).toBe(join(box.base, 'x'));
    expect(ws.resolve('/etc/hosts')).toBe('/etc/hosts');
    expect(ws.inspect(join(box.workspace, 'link'))).toBe(join(box.workspace, 'link'));
    ws.protectRoot('/');
    ws.inspectTree(box.workspace);
    checkNetwork();

    await start({ TWYLT_GUARDRAILS: 'false', TWYLT_WORKSPACE_ROOT: box.workspace }, box.runs);
    ws = workspace();
    expect(ws.resolve('/a')).toBe(join(box.workspace, 'a'));
    expect(ws.resolve('a')).toBe(join(box.workspace, 'a'));
    expect(ws.resolve('link/../..')).toBe(box.base);
    expect(ws.virtual(join(box.workspace, 'a'))).toBe('/a');
  });
});

describe('the run state', () => {
  it('is dropped by a later run without guardrails in the same process', async () => {
    const box = sandbox();
    await start(on(box.workspace));
    expect(workspace().enabled).toBe(true);
    forgetGuardrails();
    // Now the process's own environment decides (guardrails unset there), as for biz called outside any run.
    const saved = process.env.TWYLT_GUARDRAILS;
    delete process.env.TWYLT_GUARDRAILS;
    try {
      expect(workspace().enabled).toBe(false);
    } finally {
      if (saved !== undefined) process.env.TWYLT_GUARDRAILS = saved;
    }
  });
});

describe('transport checks', () => {
  it('allow the cwd inside the workspace or the allowed cwd, at any depth', async () => {
    const box = sandbox();
    const deep = join(box.runs, 'request-1/python');
    mkdirSync(deep, { recursive: true });
    for (const cwd of [box.workspace, deep, box.runs]) {
      const { hooks, stderr } = await start(on(box.workspace, { TWYLT_ALLOWED_CWD: box.runs }), cwd, 'file');
      await hooks!.beforeRemoveOutput();
      await hooks!.beforeReadInput();
      await hooks!.beforeWriteOutput();
      expect(stderr.text).toBe('');
    }
  });

  it('deny a cwd elsewhere, and links as input.json or output.json', async () => {
    const box = sandbox();
    mkdirSync(join(box.base, 'runs-other'));
    const { hooks, stderr } = await start(on(box.workspace, { TWYLT_ALLOWED_CWD: box.runs }), join(box.base, 'runs-other'), 'file');
    const failure = (await hooks!.beforeRemoveOutput().catch((e: unknown) => e)) as TwyltError;
    expect(failure.toObject()).toMatchObject({ type: 'guardrails_error', stage: 'transport', message: 'Transport policy denied', code: 'transport_cwd_or_path_outside_allowed_roots' });
    expect(incidentsIn(stderr.text)).toEqual([expect.objectContaining({ code: 'transport_cwd_or_path_outside_allowed_roots' })]);

    symlinkSync(join(box.outside, 'input.json'), join(box.runs, 'input.json'));
    const linked = await start(on(box.workspace, { TWYLT_ALLOWED_CWD: box.runs }), box.runs, 'file');
    const denial = (await linked.hooks!.beforeReadInput().catch((e: unknown) => e)) as TwyltError;
    expect([denial.kind, denial.code]).toEqual(['guardrailsTransport', 'symlink_forbidden']);
    // The requested path is relative to the root that granted the cwd.
    expect(incidentsIn(linked.stderr.text)[0]!.requested_path).toBe('/input.json');
  });

  it('need a configured root for file mode', async () => {
    const box = sandbox();
    const { hooks } = await start({ TWYLT_GUARDRAILS: '1' }, box.runs, 'file');
    await expect(hooks!.beforeReadInput()).rejects.toMatchObject({ code: 'transport_cwd_or_path_outside_allowed_roots' });
  });
});

describe('redaction of business errors', () => {
  it('replaces the host root by / in messages, stacks and paths', async () => {
    const box = sandbox();
    const { hooks } = await start(on(box.workspace));
    let thrown: any;
    try {
      readFileSync(join(box.workspace, 'missing.txt'));
    } catch (error) {
      thrown = error;
    }
    const reported = hooks!.redactError(thrown) as NodeJS.ErrnoException;
    expect(reported.message).toBe("ENOENT: no such file or directory, open '/missing.txt'");
    expect(reported.path).toBe('/missing.txt');
    expect(reported.stack).not.toContain(box.workspace);
    expect(hooks!.redactError(`bad ${box.workspace}/x`)).toBe('bad /x');
    const frozen = Object.freeze(new Error(`at ${box.workspace}`));
    expect((hooks!.redactError(frozen) as Error).message).toBe('at /');
  });
});
