/**
 * Turning observability on and off: an unobserved bridge loads none of it; bad settings are
 * refused at start with a sentence and exit 64 (a binding beyond loopback without a token:
 * exit 1), before anything is served; the metrics endpoint's own access rules.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BRIDGE_CLI, SLEEPER, bridgeEnv, startBridge } from '../support/mcp.js';
import { rawRequest, startHttpBridge } from '../support/mcp-http.js';
import { ROOT } from '../support/process.js';
import { TEST_RUNTIME } from '../support/runtimes.js';
import { metricsUrl } from './support.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-observe-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const LOAD_LOG_HOOK = `${ROOT}tests/fixtures/observe/load-log.mjs`;

/** The module URLs a stdio bridge loaded while serving one call, with `env` added. */
async function modulesLoaded(name: string, env: Record<string, string>): Promise<string[]> {
  const log = join(scratch, `${name}.log`);
  const bridge = await startBridge(['--', ...SLEEPER], { LOAD_LOG: log, ...env }, [process.execPath, '--import', LOAD_LOG_HOOK, BRIDGE_CLI]);
  try {
    expect((await bridge.client.callTool({ name: 'sleeper', arguments: { action: 'wait' } })).isError).toBeFalsy();
  } finally {
    await bridge.close();
  }
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

const observability = (urls: string[]) => urls.filter((url) => url.includes('/@opentelemetry/') || /\/twylt\/dist\/observe\//.test(url));

describe.skipIf(TEST_RUNTIME !== undefined)('what an unobserved bridge loads (a Node.js loader hook; other runtimes have none)', () => {
  it('loads neither twylt/observe nor any OpenTelemetry module, where an observed one loads both', async () => {
    const plain = await modulesLoaded('plain', {});
    expect(plain.some((url) => url.includes('/twylt-mcp/dist/server.js')), 'the hook saw the bridge load').toBe(true);
    expect(observability(plain)).toEqual([]);
    // The same bridge with traces asked for: the hook would see them (the check can fail).
    const traced = await modulesLoaded('traced', { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(traced.some((url) => url.includes('/@opentelemetry/sdk-trace/'))).toBe(true);
    expect(traced.some((url) => /\/twylt\/dist\/observe\/index\.js$/.test(url))).toBe(true);
  }, 60_000);
});

/** Run the bridge to its end (it must refuse at start). */
function refusedStart(args: string[], env: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, [BRIDGE_CLI, ...args, '--', ...SLEEPER], { cwd: ROOT, env: { ...bridgeEnv(), ...env }, encoding: 'utf8', timeout: 30_000, input: '' });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('bad settings are refused at start', () => {
  it.each([
    [['--metrics', 'nine'], {}, 64, /--metrics: expected \[HOST:\]PORT/],
    [['--metrics', '127.0.0.1:70000'], {}, 64, /--metrics: expected \[HOST:\]PORT/],
    [[], { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 64, /OTEL_EXPORTER_OTLP_PROTOCOL="grpc" is not supported; use http\/protobuf or http\/json/],
    [[], { OTEL_TRACES_EXPORTER: 'zipkin' }, 64, /OTEL_TRACES_EXPORTER="zipkin" is not supported/],
    [[], { OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }, 64, /OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/],
    [['--metrics', '0.0.0.0:0'], {}, 1, /refusing to listen on 0\.0\.0\.0 without a token/],
  ])('%j %j: exit %i', (args, env, code, message) => {
    const run = refusedStart(args as string[], env as Record<string, string>);
    expect(run.code).toBe(code);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(run.stdout).toBe('');
  });
});

describe('the metrics endpoint', () => {
  it('on loopback: Prometheus text at /metrics, a foreign Host refused, nothing else served', async () => {
    const bridge = await startHttpBridge(['--metrics', '127.0.0.1:0', '--', ...SLEEPER]);
    try {
      const url = metricsUrl(bridge.stderr());
      const ok = await rawRequest(url, { method: 'GET', headers: { host: new URL(url).host } });
      expect(ok.status).toBe(200);
      expect(ok.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(ok.body).toContain('# TYPE mcp_server_operation_duration_seconds histogram\n');
      expect((await rawRequest(url, { method: 'GET', headers: { host: 'evil.example:80' } })).status).toBe(403);
      expect((await rawRequest(url.replace('/metrics', '/mcp'), { method: 'GET', headers: { host: new URL(url).host } })).status).toBe(404);
      expect((await rawRequest(url, { method: 'POST', headers: { host: new URL(url).host } })).status).toBe(405);
    } finally {
      await bridge.stop();
    }
  }, 60_000);

  it('with the bridge\'s token: every scrape must send it', async () => {
    const token = 'metrics-test-token-0123456789';
    const bridge = await startHttpBridge(['--metrics', '127.0.0.1:0', '--', ...SLEEPER], { TWYLT_MCP_TOKEN: token });
    try {
      const url = metricsUrl(bridge.stderr());
      expect((await rawRequest(url, { method: 'GET' })).status).toBe(401);
      expect((await rawRequest(url, { method: 'GET', headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
      const ok = await rawRequest(url, { method: 'GET', headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
    } finally {
      await bridge.stop();
    }
  }, 60_000);
});
