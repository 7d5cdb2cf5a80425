/**
 * The metrics of what goes wrong, end to end through a real bridge: a call refused as busy
 * (-32010), a time-out, a cancellation, a request refused without its token; and, published
 * in this process as the sandbox publishes them, sandbox refusals with bounded labels.
 */
import diagnostics from 'node:diagnostics_channel';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startObserving } from 'twylt/observe';
import { SLEEPER, waitFor } from '../support/mcp.js';
import { MCP_HEADERS, rawRequest, startHttpBridge, toolsCall } from '../support/mcp-http.js';
import { metricsUrl } from './support.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-observe-metrics-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The value of one sample line (`name{labels}`), or undefined when it is not there. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const scrape = async (url: string, headers: Record<string, string> = {}) => (await rawRequest(url, { method: 'GET', headers })).body;

describe('metrics of refusals, time-outs and cancellations', () => {
  it('count a busy refusal, a time-out and a cancellation per tool, and the JSON-RPC code of the refusal', async () => {
    const bridge = await startHttpBridge(['--metrics', '127.0.0.1:0', '--max-concurrency', '1', '--max-queue', '0', '--timeout', '5000', '--', ...SLEEPER]);
    try {
      const url = metricsUrl(bridge.stderr());
      const release = join(scratch, 'release');
      const pidFile = join(scratch, 'pid');
      // One call holds the only slot; the next is refused at once.
      const holding = rawRequest(bridge.url, { headers: MCP_HEADERS, body: toolsCall(1, 'sleeper', { action: 'wait', release_file: release, pid_file: pidFile }) });
      await waitFor(() => existsSync(pidFile), 'the first call to run');
      const refused = await rawRequest(bridge.url, { headers: MCP_HEADERS, body: toolsCall(2, 'sleeper', { action: 'wait' }) });
      expect(refused.body).toContain('-32010');
      writeFileSync(release, '');
      await holding;
      // A call past its time-out.
      await rawRequest(bridge.url, { headers: MCP_HEADERS, body: toolsCall(3, 'sleeper', { action: 'wait', seconds: 30 }) });
      // A call whose client goes away: the bridge cancels it.
      const gone = new AbortController();
      const runningPid = join(scratch, 'pid-cancelled');
      const cancelled = fetch(bridge.url, { method: 'POST', headers: MCP_HEADERS, body: toolsCall(4, 'sleeper', { action: 'wait', seconds: 30, pid_file: runningPid }), signal: gone.signal }).catch(() => undefined);
      await waitFor(() => existsSync(runningPid), 'the call to be cancelled to run');
      gone.abort();
      await cancelled;

      let text = '';
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        text = await scrape(url);
        if (sample(text, 'twylt_tool_cancellations_total{gen_ai_tool_name="sleeper"}') === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(sample(text, 'twylt_queue_refusals_total{gen_ai_tool_name="sleeper"}')).toBe(1);
      expect(sample(text, 'mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="sleeper",error_type="-32010"}')).toBe(1);
      expect(sample(text, 'twylt_tool_timeouts_total{gen_ai_tool_name="sleeper"}')).toBe(1);
      expect(sample(text, 'twylt_tool_cancellations_total{gen_ai_tool_name="sleeper"}')).toBe(1);
      expect(sample(text, 'twylt_tool_exits_total{gen_ai_tool_name="sleeper",exit_code="SIGKILL"}')).toBe(2);
      expect(sample(text, 'twylt_tool_calls_in_flight{gen_ai_tool_name="sleeper"}')).toBe(0);
    } finally {
      await bridge.stop();
    }
  }, 90_000);

  it('count requests refused before MCP by status and reason', async () => {
    const token = 'refusals-test-token-0123456789';
    const bridge = await startHttpBridge(['--metrics', '127.0.0.1:0', '--', ...SLEEPER], { TWYLT_MCP_TOKEN: token });
    try {
      expect((await rawRequest(bridge.url, { headers: MCP_HEADERS, body: toolsCall(1, 'sleeper', { action: 'wait' }) })).status).toBe(401);
      const text = await scrape(metricsUrl(bridge.stderr()), { authorization: `Bearer ${token}` });
      expect(sample(text, 'twylt_http_refusals_total{status="401",reason="missing_token"}')).toBe(1);
    } finally {
      await bridge.stop();
    }
  }, 60_000);
});

describe('sandbox refusals', () => {
  it('are counted by reason, with a tool label only for a tool the calls named', async () => {
    const observing = await startObserving({ serviceName: 'test', metrics: { host: '127.0.0.1', port: 0 }, traces: null });
    try {
      const channel = diagnostics.channel('twylt:sandbox:refusal');
      channel.publish({ reason: 'memory', tool: 'not_a_served_tool' });
      channel.publish({ reason: 'network' });
      channel.publish({ reason: 'network' });
      channel.publish({ reason: 'x"\n{evil}' });
      const text = await scrape(observing.metrics!.url);
      expect(sample(text, 'twylt_sandbox_refusals_total{reason="memory"}')).toBe(1);
      expect(sample(text, 'twylt_sandbox_refusals_total{reason="network"}')).toBe(2);
      expect(sample(text, 'twylt_sandbox_refusals_total{reason="other"}')).toBe(1);
      expect(text).not.toContain('not_a_served_tool');
      expect(text).not.toContain('evil');
    } finally {
      await observing.close();
    }
  });
});
