/**
 * Browse mode end to end: the real `twylt-mcp --catalog browse`, over stdio and over HTTP,
 * driven by the MCP SDK's client. Its two tools list the catalog by category and call a tool
 * through the same path as a directly served one: the results of both modes are compared.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { example, run, ROOT } from '../support/process.js';
import { BRIDGE_CLI, INITIALIZE, INITIALIZED, SLEEPER, isRunning, rawExchange, sleeperPid, startBridge, textOf, waitFor, type Bridge } from '../support/mcp.js';
import { MCP_HEADERS, rawRequest, sseMessages, startHttpBridge, type HttpBridgeProcess } from '../support/mcp-http.js';

const MEASURE = [process.execPath, `${ROOT}tests/fixtures/mcp/measure.mjs`];
const ECHO = example('echo');
/** Bounds the calls of sleeper_quick (and every tool's start-up describe): generous for a loaded machine. */
const QUICK_TIMEOUT_MS = 3000;
const BIG = '123456789012345678901234567890';
const UNIT_REFUSAL =
  'Invalid arguments for "measure" (checked against its inputSchema; the tool was not run). Correct them and call it again:\n' +
  '- /unit: must be one of: "celsius", "fahrenheit", "kelvin" (got "rankine")';

let dir: string;
let config: string;
let browse: Bridge;
let direct: Bridge;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-browse-'));
  config = join(dir, 'catalog.json');
  writeFileSync(
    config,
    JSON.stringify({
      tools: [
        { command: MEASURE, category: 'science/units' },
        { command: SLEEPER, category: 'science' },
        { command: SLEEPER, name: 'sleeper_quick', timeoutMs: QUICK_TIMEOUT_MS, category: 'science' },
        { command: ECHO, category: 'text' },
        { command: SLEEPER, name: 'plain' },
      ],
    }),
  );
  [browse, direct] = await Promise.all([startBridge(['--catalog', 'browse', '--config', config]), startBridge(['--config', config])]);
});

afterAll(async () => {
  await Promise.all([browse?.close(), direct?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

function list(client: Bridge['client'], args: Record<string, unknown> = {}) {
  return client.callTool({ name: 'twylt_list', arguments: args });
}

function browseCall(client: Bridge['client'], name: unknown, args: unknown, options: { signal?: AbortSignal } = {}) {
  return client.callTool({ name: 'twylt_call', arguments: { name, arguments: args } }, undefined, options);
}

describe('browse mode over stdio', () => {
  it('offers exactly twylt_list and twylt_call, and instructions that say to list first', async () => {
    const { tools } = await browse.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['twylt_list', 'twylt_call']);
    const instructions = browse.client.getInstructions() ?? '';
    expect(instructions).toMatch(/Call twylt_list first/);
    expect(instructions).toContain('Categories: science (2), science/units (1), text (1), uncategorized (1).');
    // The default mode is unchanged: one MCP tool per TWYLT tool, no instructions.
    expect((await direct.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['echo', 'measure', 'plain', 'sleeper', 'sleeper_quick']);
    expect(direct.client.getInstructions()).toBeUndefined();
  });

  it('lists every tool with its category, description and schemas, as the direct mode lists them', async () => {
    const result = await list(browse.client);
    expect(result.isError).toBeFalsy();
    const listing = result.structuredContent as { categories: unknown; tools: Array<Record<string, unknown>> };
    expect(listing.categories).toEqual([
      { name: 'science', tools: 2 },
      { name: 'science/units', tools: 1 },
      { name: 'text', tools: 1 },
      { name: 'uncategorized', tools: 1 },
    ]);
    const { tools } = await direct.client.listTools();
    expect(listing.tools.map((tool) => [tool.name, tool.category])).toEqual([
      ['measure', 'science/units'],
      ['sleeper', 'science'],
      ['sleeper_quick', 'science'],
      ['echo', 'text'],
      ['plain', 'uncategorized'],
    ]);
    for (const tool of listing.tools) {
      const served = tools.find((candidate) => candidate.name === tool.name)!;
      expect(tool).toEqual({ name: served.name, category: tool.category, description: served.description, inputSchema: served.inputSchema, outputSchema: served.outputSchema });
    }
    expect(JSON.parse(textOf(result))).toEqual(listing);
  });

  it('lists one category with the categories below it, and refuses an unknown one by naming the others', async () => {
    const names = async (category: string) => ((await list(browse.client, { category })).structuredContent as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
    expect(await names('science')).toEqual(['measure', 'sleeper', 'sleeper_quick']);
    expect(await names('science/units')).toEqual(['measure']);
    expect(await names('uncategorized')).toEqual(['plain']);

    const unknown = await list(browse.client, { category: 'sci' });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toBe('There is no category "sci". The categories are: "science", "science/units", "text", "uncategorized".');
    const wrong = await list(browse.client, { category: 3 });
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toBe('"category" must be a string, one of the categories twylt_list shows; got a number.');
    const extra = await list(browse.client, { category: 'text', name: 'echo' });
    expect(textOf(extra)).toBe('twylt_list takes only an optional "category"; it does not take "name".');
  });

  it('calls a tool and answers exactly as the direct mode does: a result, invalid arguments, a tool error', async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ['echo', { text: 'hello, catalog' }],
      ['measure', { value: 7, unit: 'rankine' }],
      ['sleeper', { action: 'fail' }],
      ['measure', { value: 3, unit: 'kelvin', colour: 'red' }],
    ];
    for (const [name, args] of cases) {
      const [viaBrowse, viaDirect] = await Promise.all([browseCall(browse.client, name, args), direct.client.callTool({ name, arguments: args })]);
      expect(viaBrowse).toEqual(viaDirect);
    }
    const ok = await browseCall(browse.client, 'echo', { text: 'hello, catalog' });
    expect(ok.isError).toBeFalsy();
    expect(ok.structuredContent).toEqual({ text: 'hello, catalog' });

    const invalid = await browseCall(browse.client, 'measure', { value: 7, unit: 'rankine' });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toBe(UNIT_REFUSAL);

    const failed = await browseCall(browse.client, 'sleeper', { action: 'fail' });
    expect(failed.isError).toBe(true);
    const content = failed.content as Array<{ text: string }>;
    expect(content[0]!.text).toBe('"sleeper" failed: RuntimeError: failed on request');
    expect(JSON.parse(content[1]!.text).error).toMatchObject({ type: 'execution_error', stage: 'biz' });
  });

  it('refuses an unknown tool name and a malformed twylt_call with a message the model can act on', async () => {
    const unknown = await browseCall(browse.client, 'mesure', { value: 1, unit: 'kelvin' });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toBe('There is no tool named "mesure" in this catalog. Call twylt_list to see the tools and their names.');

    const noName = await browseCall(browse.client, 42, {});
    expect(textOf(noName)).toBe('"name" must be a string, the name of a tool that twylt_list shows; got a number.');
    const listArgs = await browseCall(browse.client, 'echo', ['hi']);
    expect(textOf(listArgs)).toBe('"arguments" must be a JSON object, the tool\'s arguments; got an array.');
    const flat = await browse.client.callTool({ name: 'twylt_call', arguments: { name: 'echo', text: 'hi' } });
    expect(flat.isError).toBe(true);
    expect(textOf(flat)).toBe('twylt_call takes {"name": TOOL, "arguments": {...}}; put "text" inside "arguments".');
    // The MCP tools themselves: only the two.
    await expect(browse.client.callTool({ name: 'echo', arguments: { text: 'hi' } })).rejects.toThrow(/Unknown tool: echo; this server offers twylt_list and twylt_call/);
  });

  it('stops a call at its tool\'s time-out, and kills the tool when the client cancels', async () => {
    const slow = await browseCall(browse.client, 'sleeper_quick', { action: 'wait', seconds: 60 });
    expect(slow.isError).toBe(true);
    expect(textOf(slow)).toBe(`"sleeper_quick" timed out: it did not finish within ${QUICK_TIMEOUT_MS} ms and was stopped.`);

    const pidFile = join(dir, 'cancel.pid');
    const controller = new AbortController();
    const pending = browseCall(browse.client, 'sleeper', { action: 'wait', seconds: 60, pid_file: pidFile }, { signal: controller.signal });
    const pid = await sleeperPid(pidFile);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await waitFor(() => !isRunning(pid), 'the cancelled sleeper to end');
  });

  it('passes integers beyond 2^53 to the tool and back with every digit, on the wire', async () => {
    const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"twylt_call","arguments":{"name":"measure","arguments":{"value":${BIG},"unit":"kelvin"}}}}`;
    const answers = await rawExchange(['--catalog', 'browse', '--', ...MEASURE], [INITIALIZE, INITIALIZED, call]);
    expect(answers.get(2)).toContain(`"structuredContent":{"value":${BIG},"unit":"kelvin"}`);
  });

  it('refuses an unknown --catalog mode as a usage error', async () => {
    const result = await run([process.execPath, BRIDGE_CLI, '--catalog', 'all', '--', ...MEASURE]);
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('--catalog takes "tools", "browse" or "search", got "all"');
  });
});

describe('browse mode over HTTP', () => {
  let bridge: HttpBridgeProcess;

  beforeAll(async () => {
    bridge = await startHttpBridge(['--catalog', 'browse', '--config', config]);
  });

  afterAll(async () => {
    await bridge?.stop();
  });

  it('lists by category and calls through twylt_call, with the same refusals as over stdio', async () => {
    const client = await bridge.connect();
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['twylt_list', 'twylt_call']);
    expect(client.getInstructions()).toMatch(/Call twylt_list first/);
    const text = (await list(client, { category: 'text' })).structuredContent as { tools: Array<{ name: string }> };
    expect(text.tools.map((tool) => tool.name)).toEqual(['echo']);
    expect(textOf(await list(client, { category: 'nope' }))).toMatch(/^There is no category "nope"\./);

    expect((await browseCall(client, 'echo', { text: 'over http' })).structuredContent).toEqual({ text: 'over http' });
    const invalid = await browseCall(client, 'measure', { value: 7, unit: 'rankine' });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toBe(UNIT_REFUSAL);
    expect(textOf(await browseCall(client, 'nothing', {}))).toMatch(/^There is no tool named "nothing"/);
    const failed = await browseCall(client, 'sleeper', { action: 'fail' });
    expect((failed.content as Array<{ text: string }>)[0]!.text).toBe('"sleeper" failed: RuntimeError: failed on request');
    // The call log names the TWYLT tool, not twylt_call.
    await waitFor(() => bridge.events().some((event) => event.event === 'call' && event.tool === 'sleeper' && event.outcome === 'failed'), 'the log line of the failed call');
  });

  it('keeps integers beyond 2^53 exact, on the wire', async () => {
    const initialize = await rawRequest(bridge.url, { headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    expect(initialize.status).toBe(200);
    const body = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"twylt_call","arguments":{"name":"measure","arguments":{"value":${BIG},"unit":"celsius"}}}}`;
    const response = await rawRequest(bridge.url, { headers: MCP_HEADERS, body });
    expect(response.status).toBe(200);
    const line = response.body.split('\n').find((candidate) => candidate.startsWith('data: '))!;
    expect(line).toContain(`"structuredContent":{"value":${BIG},"unit":"celsius"}`);
    expect(sseMessages(response.body)[0]!.result.isError).toBeFalsy();
  });
});
