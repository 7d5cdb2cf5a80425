/**
 * A real Prometheus (Debian's) scraping `twylt-mcp --http --metrics` during a run: every
 * tools/call counted per tool, failed calls with their error_type, and no label value made
 * of what a caller sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JS_RUNTIME } from '../support/runtimes.js';
import { ROOT } from '../support/process.js';
import { SLEEPER } from '../support/mcp.js';
import { startHttpBridge, type HttpBridgeProcess } from '../support/mcp-http.js';
import { blocksUnder, readDoc } from '../docs/markdown.js';
import { hasPrometheus, metricsUrl, startPrometheus, type Prometheus } from './support.js';

const DOC = readDoc('docs/observability.md');
/** The doc's scrape config, pointed at `target` and scraping every 500 ms. */
function scrapeConfig(target: string): string {
  const [block] = blocksUnder(DOC, 'Prometheus scrape config', 'yaml');
  expect(block!.body).toContain("targets: ['127.0.0.1:9464']");
  return block!.body.replace('127.0.0.1:9464', target).replace('scrape_interval: 15s', 'scrape_interval: 500ms');
}
/** The doc's example queries, each line that is not a comment. */
const QUERIES = blocksUnder(DOC, 'Example queries', 'promql')[0]!.body.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));

const TRACEPARENT_TOOL = [...JS_RUNTIME, `${ROOT}tests/fixtures/mcp/traceparent.mjs`];
const tools = (...commands: ReadonlyArray<readonly string[]>) => commands.flatMap((command) => ['--', ...command]);

describe.skipIf(!hasPrometheus)('Prometheus scraping the bridge (needs Debian\'s prometheus at /usr/bin/prometheus; .ci/run installs it)', () => {
  let bridge: HttpBridgeProcess;
  let prometheus: Prometheus;

  beforeAll(async () => {
    bridge = await startHttpBridge(['--metrics', '127.0.0.1:0', ...tools(SLEEPER, TRACEPARENT_TOOL)]);
    prometheus = await startPrometheus(scrapeConfig(new URL(metricsUrl(bridge.stderr())).host));
  }, 60_000);
  afterAll(async () => {
    await prometheus?.stop();
    await bridge?.stop();
  });

  it('sees every call counted per tool, and failed calls by their error_type', async () => {
    const client = await bridge.connect();
    for (let i = 0; i < 3; i++) expect((await client.callTool({ name: 'traceparent', arguments: {} })).isError).toBeFalsy();
    for (let i = 0; i < 2; i++) expect((await client.callTool({ name: 'sleeper', arguments: { action: 'fail' } })).isError).toBe(true);
    // An unknown tool: refused with -32602, counted without its name as a label.
    await expect(client.callTool({ name: 'no_such_tool_x', arguments: {} })).rejects.toThrow(/Unknown tool/);

    const calls = async () => Object.fromEntries((await prometheus.query('twylt_tool_calls_total')).map(({ metric, value }) => [`${metric.gen_ai_tool_name}/${metric.error_type ?? ''}`, value]));
    let seen: Record<string, number> = {};
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      seen = await calls();
      if (seen['traceparent/'] === 3 && seen['sleeper/failed'] === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(seen).toEqual({ 'traceparent/': 3, 'sleeper/failed': 2 });

    const operations = await prometheus.query('mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call"}');
    const byLabels = Object.fromEntries(operations.map(({ metric, value }) => [`${metric.mcp_method_name} ${metric.gen_ai_tool_name ?? '-'} ${metric.error_type ?? '-'}`, value]));
    expect(byLabels).toEqual({ 'tools/call traceparent -': 3, 'tools/call sleeper failed': 2, 'tools/call - -32602': 1 });
    const exits = await prometheus.query('twylt_tool_exits_total');
    expect(Object.fromEntries(exits.map(({ metric, value }) => [`${metric.gen_ai_tool_name} ${metric.exit_code}`, value]))).toEqual({ 'traceparent 0': 3, 'sleeper 5': 2 });
    // What the caller typed never becomes a label value.
    const series = (await (await fetch(`${prometheus.url}/api/v1/series?match[]=${encodeURIComponent('{job="twylt-mcp"}')}`)).json()) as { data: Array<Record<string, string>> };
    expect(JSON.stringify(series.data)).not.toContain('no_such_tool_x');
  }, 90_000);

  it('answers every example query of docs/observability.md', async () => {
    expect(QUERIES.length).toBeGreaterThan(10);
    const answered: Record<string, number> = {};
    const ask = async () => {
      for (const query of QUERIES) answered[query] = (await prometheus.query(query.replaceAll('$__rate_interval', '1m'))).length;
    };
    // A rate needs two scrapes of a series: wait (bounded) for the one after the calls were first seen.
    const deadline = Date.now() + 30_000;
    await ask();
    while (answered['sum by (gen_ai_tool_name) (rate(twylt_tool_calls_total[$__rate_interval]))'] !== 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      await ask();
    }
    // Those over the calls made above have a series to show.
    expect(answered['sum by (gen_ai_tool_name) (rate(twylt_tool_calls_total[$__rate_interval]))']).toBe(2);
    expect(answered['sum by (gen_ai_tool_name, error_type) (rate(twylt_tool_calls_total{error_type!=""}[$__rate_interval]))']).toBe(1);
  }, 60_000);
});
