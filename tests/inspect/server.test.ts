/**
 * `twylt inspect`'s server, without a browser: who gets in (token, Host, Origin, POST from
 * the page only), that a refused request runs nothing (the sleeper logs every start), that
 * a request names a tool and never a command, exact numbers, the history, cancellation,
 * and the command line.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitGone } from '../support/processes.js';
import { NO_PYTHON_REASON, noPython, pythonTool } from '../support/python.js';
import { repoRoot, runTwylt } from '../support/twylt-cli.js';
import { send, startInspect, type Inspect, type Reply } from './support.js';

const sleeper = join(repoRoot, 'tests/fixtures/mcp/sleeper.mjs');
const dir = mkdtempSync(join(tmpdir(), 'twylt-inspect-server-'));
const log = join(dir, 'starts.log');
const starts = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);

let inspect: Inspect;
/** The credential of every API request, the page's as a script's. */
let auth: { authorization: string };
const json = (reply: Reply) => JSON.parse(reply.body);

beforeAll(async () => {
  // Commands by paths relative to their working directory: the file transport runs a tool in
  // a fresh directory, so it also proves they were made absolute. (The sleeper itself stays
  // where its shared wire module is.)
  writeFileSync(join(dir, 'sleeper.mjs'), `import ${JSON.stringify(pathToFileURL(sleeper).href)};\n`);
  const tools: object[] = [
    { command: ['node', 'sleeper.mjs'], env: { SLEEPER_LOG: log, SLEEPER_TAG: 'inspected' } },
    { command: ['node', 'tests/inspect/fixtures/shapes.mjs'], cwd: repoRoot },
  ];
  if (!noPython) tools.push({ command: pythonTool() });
  writeFileSync(join(dir, 'tools.json'), JSON.stringify({ tools }));
  inspect = await startInspect(['--config', join(dir, 'tools.json')]);
  auth = { authorization: `Bearer ${inspect.token}` };
});

afterAll(async () => {
  await inspect?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A POST as the page makes it: the token, its Origin, a JSON body. */
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  send(inspect.port, {
    method: 'POST',
    path,
    headers: { ...auth, origin: inspect.origin, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const WAIT = { tool: 'sleeper', input: { action: 'wait', seconds: 0 } };

describe('who gets in', () => {
  it('prints its link on stderr, bound to 127.0.0.1, and describes each tool once at start', () => {
    expect(inspect.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]{43}$/);
    expect(inspect.stderr()).toMatch(/^twylt inspect: \d tools: sleeper, shapes/m);
    expect(starts()).toBe(1);
  });

  it('serves the page and its files, which hold no secret, without a token, and sets no cookie', async () => {
    const page = await send(inspect.port, { path: '/' });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<script type="module" src="/ui/app.js">');
    expect(page.headers['set-cookie']).toBeUndefined();
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    const script = await send(inspect.port, { path: '/ui/app.js' });
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.headers['set-cookie']).toBeUndefined();
  });

  it('takes the token in Authorization only: none, a wrong one, one in the address or in a cookie is refused (401)', async () => {
    const none = await send(inspect.port, { path: '/api/tools' });
    expect(none.status).toBe(401);
    expect(json(none).error).toBe('a valid token is required');
    expect((await send(inspect.port, { path: '/api/tools', headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await send(inspect.port, { path: `/api/tools?token=${inspect.token}` })).status).toBe(401);
    expect((await send(inspect.port, { path: '/api/tools', headers: { cookie: `twylt_inspect_${inspect.port}=${inspect.token}` } })).status).toBe(401);
    expect((await send(inspect.port, { path: '/api/tools', headers: auth })).status).toBe(200);
  });

  it('refuses a foreign Host (403), even with the token: no DNS rebinding', async () => {
    const host = { host: `attacker.example:${inspect.port}` };
    expect((await send(inspect.port, { path: '/', headers: host })).status).toBe(403);
    expect((await send(inspect.port, { path: '/api/tools', headers: { ...host, ...auth } })).status).toBe(403);
    expect((await post('/api/call', WAIT, host)).status).toBe(403);
    // The loopback names are its own.
    expect((await send(inspect.port, { path: '/api/tools', headers: { host: `localhost:${inspect.port}`, ...auth } })).status).toBe(200);
  });

  it('refuses a foreign Origin (403), even with the token', async () => {
    const reply = await post('/api/call', WAIT, { origin: 'http://attacker.example' });
    expect(reply.status).toBe(403);
    expect(json(reply).error).toMatch(/Origin/);
    expect((await send(inspect.port, { path: '/api/tools', headers: { ...auth, origin: `http://127.0.0.1:${inspect.port + 1}` } })).status).toBe(403);
  });

  it('takes a POST only with the token, from its own page (Origin, same-origin fetch) or a script, and only as JSON', async () => {
    expect((await post('/api/call', WAIT, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post('/api/call', WAIT, { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post('/api/call', WAIT, { authorization: '' })).status).toBe(401);
    expect((await send(inspect.port, { path: '/api/call', headers: auth })).status).toBe(405);
  });

  it('runs only configured tools, by name: a command in a request is refused, an unknown name is 404', async () => {
    const command = await post('/api/call', { tool: 'sleeper', command: ['node', '-e', 'process.exit(9)'], input: {} });
    expect(command.status).toBe(400);
    expect(json(command).error).toMatch(/unknown field "command"/);
    const unknown = await post('/api/call', { tool: 'node', input: {} });
    expect(unknown.status).toBe(404);
    expect((await post('/api/call', { tool: 'sleeper', input: [] })).status).toBe(400);
    expect((await post('/api/call', { tool: 'sleeper', input: {}, transport: 'shell' })).status).toBe(400);
    expect((await post('/api/call', '{"tool": "sleeper", "input": ')).status).toBe(400);
  });

  it('refuses a body over its limit (413)', async () => {
    const reply = await post('/api/call', `{"tool":"sleeper","input":{"pad":"${'x'.repeat(17 * 1024 * 1024)}"}}`);
    expect(reply.status).toBe(413);
  });

  it('ran nothing for any refused request: the sleeper started only for its describe', () => {
    expect(starts()).toBe(1);
  });
});

describe('calls', () => {
  it('runs a call from the page and from a script with the Bearer token; each start is logged', async () => {
    const before = starts();
    const reply = await post('/api/call', WAIT);
    expect(reply.status).toBe(200);
    const record = json(reply);
    expect(record).toMatchObject({ tool: 'sleeper', ok: true, exitCode: 0, transport: 'cli' });
    expect(JSON.parse(record.output.text)).toMatchObject({ tag: 'inspected' });
    const script = await send(inspect.port, {
      method: 'POST',
      path: '/api/call',
      headers: { authorization: `Bearer ${inspect.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(WAIT),
    });
    expect(script.status).toBe(200);
    expect(starts()).toBe(before + 2);
  });

  it('calls over each transport, the file transport in a fresh directory with the command made absolute', async () => {
    for (const transport of ['cli', 'stdin', 'file']) {
      const record = json(await post('/api/call', { tool: 'shapes', input: { title: transport }, transport }));
      expect(record, transport).toMatchObject({ ok: true, transport });
      expect(JSON.parse(record.output.text)).toEqual({ received: { title: transport } });
    }
  });

  it('reports a tool failure: exit code, stage, the error object, stderr and duration', async () => {
    const record = json(await post('/api/call', { tool: 'sleeper', input: { action: 'fail' } }));
    expect(record).toMatchObject({ ok: false, exitCode: 5, stage: 'biz', error: { kind: 'failed', name: 'ToolError', object: { type: 'execution_error' } } });
    expect(record.stderr).toContain('failed on request');
    expect(record.durationMs).toBeGreaterThan(0);
    const invalid = json(await post('/api/call', { tool: 'sleeper', input: { action: 'jump', extra: 1 } }));
    expect(invalid).toMatchObject({ ok: false, exitCode: 2, stage: 'input', error: { kind: 'invalid_input', name: 'ToolError' } });
    expect(invalid.error.issues.map((issue: { path: string }) => issue.path)).toEqual(['action', 'extra']);
  });

  it('kills a call that passes its time-out and says so', async () => {
    const record = json(await post('/api/call', { tool: 'sleeper', input: { action: 'wait', seconds: 30 }, timeoutMs: 300 }));
    expect(record).toMatchObject({ ok: false, exitCode: null, timeoutMs: 300, error: { kind: 'timeout', name: 'TimeoutError' } });
  });

  it('kills the tool when the page gives up on a call (the request is closed)', async () => {
    const pidFile = join(dir, 'cancel.pid');
    const body = JSON.stringify({ tool: 'sleeper', input: { action: 'wait', pid_file: pidFile, release_file: join(dir, 'never') } });
    const { request } = await import('node:http');
    const req = request({ host: '127.0.0.1', port: inspect.port, method: 'POST', path: '/api/call', headers: { host: `127.0.0.1:${inspect.port}`, ...auth, origin: inspect.origin, 'content-type': 'application/json' } });
    req.on('error', () => {});
    req.end(body);
    const deadline = Date.now() + 15_000;
    while (!existsSync(pidFile) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    const pid = Number(readFileSync(pidFile, 'utf8'));
    req.destroy();
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(alive()).toBe(false);
  });

  it.skipIf(noPython)(`passes an integer beyond 2^53 to the tool and back digit for digit (${noPython ? NO_PYTHON_REASON : 'python3'})`, async () => {
    const record = json(await post('/api/call', '{"tool":"py_echo","input":{"text":"n","scale":12345678901234567890}}'));
    expect(record.ok).toBe(true);
    expect(record.input).toContain('"scale": 12345678901234567890');
    expect(record.output.text).toContain('"scale": 12345678901234567890');
    expect(record.output.pretty).toContain('"scale": 12345678901234567890');
  });

  it('describes a tool on request, each mode', async () => {
    const spec = json(await post('/api/describe', { tool: 'sleeper', mode: 'json_spec' }));
    expect(JSON.parse(spec.text)).toMatchObject({ format_version: '1.8', name: 'sleeper' });
    // The sleeper answers json_spec only: a failing describe is reported, not hidden.
    const brief = await post('/api/describe', { tool: 'sleeper', mode: 'brief' });
    expect(brief.status).toBe(502);
    expect(json(brief).error).toMatch(/describe brief failed/);
  });

  it('keeps every call in the history, numbered in order, and lists the tools', async () => {
    const history = json(await send(inspect.port, { path: '/api/history', headers: auth }));
    const ids = history.calls.map((call: { id: number }) => call.id);
    expect(ids.length).toBeGreaterThanOrEqual(8);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids.slice().sort((a: number, b: number) => a - b));
    const tools = json(await send(inspect.port, { path: '/api/tools', headers: auth }));
    expect(tools.tools[0]).toMatchObject({ name: 'sleeper', transport: 'cli', timeoutMs: 30000, spec: { name: 'sleeper' } });
    expect(tools.tools[0].command).toMatch(/^node \/.*sleeper\.mjs$/);
  });

  it('describes the tools again on Reload', async () => {
    const before = starts();
    const reply = await post('/api/reload', {});
    expect(reply.status).toBe(200);
    expect(json(reply).tools.map((tool: { name: string }) => tool.name)).toContain('sleeper');
    expect(starts()).toBe(before + 1);
  });
});

describe('the command line', () => {
  it('has --help', async () => {
    const run = await runTwylt(['inspect', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('twylt inspect [--config tools.json]');
    expect(run.stdout).toContain('--no-open');
    const top = await runTwylt(['--help']);
    expect(top.stdout).toMatch(/^ {2}inspect {3}a local web page/m);
  });

  it('refuses wrong usage with exit 64', async () => {
    for (const args of [[], ['--port', 'x', '--', 'node', sleeper], ['--bogus', '--', 'node', sleeper], ['--', 'node', sleeper, '--']]) {
      const run = await runTwylt(['inspect', ...args]);
      expect(run.code, args.join(' ')).toBe(64);
      expect(run.stderr).toMatch(/^twylt inspect: /);
    }
  });

  it('does not start when a tool cannot be described or the config is wrong (exit 1, naming it)', async () => {
    const broken = await runTwylt(['inspect', '--no-open', '--', 'node', '-e', 'process.exit(3)']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/cannot describe tool \(node -e/);
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ tools: [{ command: [] }] }));
    const config = await runTwylt(['inspect', '--no-open', '--config', join(dir, 'bad.json')]);
    expect(config.code).toBe(1);
    expect(config.stderr).toContain('tools[0].command');
  });

  it('stops on SIGTERM with exit 0', async () => {
    const other = await startInspect(['--', 'node', sleeper]);
    expect(other.port).not.toBe(inspect.port);
    const { code, stderr } = await other.stop();
    expect(code).toBe(0);
    expect(stderr).toContain('twylt inspect: stopped (SIGTERM)');
  });

  it('stops on SIGHUP (the terminal closed) with exit 0, killing the tool of a call in flight', async () => {
    const other = await startInspect(['--', 'node', sleeper]);
    const pidFile = join(dir, 'hangup.pid');
    const body = JSON.stringify({ tool: 'sleeper', input: { action: 'wait', pid_file: pidFile, release_file: join(dir, 'never') } });
    const headers = { authorization: `Bearer ${other.token}`, origin: other.origin, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' };
    send(other.port, { method: 'POST', path: '/api/call', headers, body }).catch(() => {});
    const deadline = Date.now() + 15_000;
    while (!existsSync(pidFile) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    const pid = Number(readFileSync(pidFile, 'utf8'));
    other.child.kill('SIGHUP');
    // Let it stop by itself: stop() would send SIGTERM at once, and a signal sent second may
    // still be handled first.
    const stopDeadline = Date.now() + 15_000;
    while (other.child.exitCode === null && other.child.signalCode === null && Date.now() < stopDeadline) await new Promise((resolve) => setTimeout(resolve, 25));
    const { code, stderr } = await other.stop();
    const gone = await waitGone(pid);
    if (!gone) process.kill(pid, 'SIGKILL'); // orphaned: do not leave it behind
    expect([code, stderr, gone]).toEqual([0, expect.stringContaining('twylt inspect: stopped (SIGHUP)'), true]);
  });
});
