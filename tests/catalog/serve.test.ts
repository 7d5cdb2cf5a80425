/**
 * A catalog served: `twylt-mcp --config catalog.json` lists its tools from the describe
 * cache without starting one and calls them; a changed tool is described again;
 * `--scan DIR` serves a folder at once; a tool that cannot be described is left out (or,
 * with --strict, stops the start); `twylt inspect` serves the same catalog.
 */
import { readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BRIDGE_CLI, startBridge } from '../support/mcp.js';
import { startHttpBridge } from '../support/mcp-http.js';
import { run } from '../support/process.js';
import { runTwylt } from '../support/twylt-cli.js';
import { NO_PYTHON_REASON, noPython, python } from '../support/python.js';
import { send, startInspect } from '../inspect/support.js';
import { PACKS, copyPack, scan, scratch } from './support.js';

const dir = scratch('serve');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each start of the counted tool adds a line here. */
const starts = join(dir, 'starts.log');
const countStarts = () => readFileSync(starts, 'utf8').split('\n').filter(Boolean);

describe('a catalog with a describe cache', () => {
  const pack = copyPack('counted', dir);
  const catalog = join(dir, 'catalog.json');
  // The bridge passes its environment on to the tools it starts.
  process.env.PACK_TEST_STARTS = starts;
  afterAll(() => delete process.env.PACK_TEST_STARTS);

  it('is served by twylt-mcp without starting the tool until it is called', async () => {
    writeFileSync(starts, '');
    expect((await scan([pack, '--write', catalog])).code).toBe(0);
    expect(countStarts()).toEqual(['{"describe":"json_spec"}']);
    writeFileSync(starts, '');
    const bridge = await startBridge(['--config', catalog]);
    try {
      const { tools } = await bridge.client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['counted']);
      expect(countStarts()).toEqual([]);
      const result = await bridge.client.callTool({ name: 'counted', arguments: { a: 2, b: 3 } });
      expect(result.structuredContent).toEqual({ sum: 5 });
      expect(countStarts()).toEqual(['{"a":2,"b":3}']);
    } finally {
      await bridge.close();
    }
  });

  it('is served by twylt-mcp --http the same way', async () => {
    writeFileSync(starts, '');
    const bridge = await startHttpBridge(['--config', catalog], { PACK_TEST_STARTS: starts });
    try {
      const client = await bridge.connect();
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['counted']);
      expect(countStarts()).toEqual([]);
      expect((await client.callTool({ name: 'counted', arguments: { a: 40, b: 2 } })).structuredContent).toEqual({ sum: 42 });
      expect(countStarts()).toEqual(['{"a":40,"b":2}']);
    } finally {
      await bridge.stop();
    }
  });

  it('describes a changed tool again', async () => {
    const file = join(pack, 'tool.mjs');
    const later = new Date(Date.now() + 5000);
    utimesSync(file, later, later);
    writeFileSync(starts, '');
    const bridge = await startBridge(['--config', catalog]);
    try {
      expect((await bridge.client.listTools()).tools.map((tool) => tool.name)).toEqual(['counted']);
      expect(countStarts()).toEqual(['{"describe":"json_spec"}']);
    } finally {
      await bridge.close();
    }
  });

  it('is served by twylt inspect (the API), from the cache too, once a scan refreshed it', async () => {
    expect((await scan([pack, '--write', catalog])).code).toBe(0);
    writeFileSync(starts, '');
    const inspect = await startInspect(['--config', catalog], { PACK_TEST_STARTS: starts });
    try {
      const auth = { authorization: `Bearer ${inspect.token}` };
      const listed = JSON.parse((await send(inspect.port, { path: '/api/tools', headers: auth })).body);
      expect(listed.tools.map((tool: { name: string }) => tool.name)).toEqual(['counted']);
      const call = await send(inspect.port, {
        method: 'POST',
        path: '/api/call',
        headers: { ...auth, 'content-type': 'application/json', origin: inspect.origin },
        body: JSON.stringify({ tool: 'counted', input: { a: 1, b: 1 } }),
      });
      const record = JSON.parse(call.body);
      expect(record.ok).toBe(true);
      expect(JSON.parse(record.output.text)).toEqual({ sum: 2 });
      // Started once, for the call: the list came from the describe cache.
      expect(countStarts()).toEqual(['{"a":1,"b":1}']);
    } finally {
      await inspect.stop();
    }
  });
});

describe('a tool that cannot be described', () => {
  const hang = [python ?? 'python3', join(PACKS, 'broken/hang/tool.py')];
  const echo = [python ?? 'python3', join(PACKS, 'dupes/one/tool.py')];

  it.skipIf(noPython)(`is left out and reported; the others are served${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, async () => {
    const bridge = await startBridge(['--describe-timeout', '3000', '--', ...echo, '--', ...hang]);
    try {
      expect((await bridge.client.listTools()).tools.map((tool) => tool.name)).toEqual(['same']);
      expect(bridge.stderr()).toMatch(/twylt-mcp: left out, described again at the next start: cannot describe tool \(.*hang\/tool\.py\): .*3000 ms/);
    } finally {
      await bridge.close();
    }
  });

  it.skipIf(noPython)(`stops the start with --strict${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, async () => {
    const result = await run([process.execPath, BRIDGE_CLI, '--strict', '--describe-timeout', '3000', '--', ...echo, '--', ...hang], { timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^twylt-mcp: cannot start:\ntwylt-mcp: cannot describe tool \(.*hang\/tool\.py\)/);
  });
});

describe.skipIf(noPython)(`--scan DIR${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  it('twylt-mcp serves the ok tools of a folder and reports the others', async () => {
    // The bridge scans with python3 from PATH, as a user's would.
    const bridge = await startBridge(['--scan', join(PACKS, 'essential'), '--scan', join(PACKS, 'broken'), '--describe-timeout', '3000']);
    try {
      const { tools } = await bridge.client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['pack_echo', 'pack_upper']);
      const result = await bridge.client.callTool({ name: 'pack_upper', arguments: { text: 'hi' } });
      expect(result.structuredContent).toEqual({ upper: 'HI' });
      expect(bridge.stderr()).toMatch(/--scan: left out .*needs_dep\/run\.py \(needs_install\): its dependencies are missing/);
      expect(bridge.stderr()).toMatch(/--scan: left out .*hang\/tool\.py \(failed\): cannot describe it/);
    } finally {
      await bridge.close();
    }
  });

  it('a folder that does not exist stops the start with a message', async () => {
    const nowhere = join(dir, 'nowhere');
    const bridge = await run([process.execPath, BRIDGE_CLI, '--scan', nowhere], { timeoutMs: 60_000 });
    expect(bridge.code).toBe(1);
    expect(bridge.stderr).toBe(`twylt-mcp: cannot start:\ntwylt-mcp: --scan ${nowhere}: not a folder\n`);
    const inspect = await runTwylt(['inspect', '--no-open', '--scan', nowhere]);
    expect(inspect.code).toBe(1);
    expect(inspect.stderr).toBe(`twylt inspect: --scan ${nowhere}: not a folder\n`);
  });

  it('twylt inspect serves them too', async () => {
    const inspect = await startInspect(['--scan', join(PACKS, 'essential')]);
    try {
      const listed = JSON.parse((await send(inspect.port, { path: '/api/tools', headers: { authorization: `Bearer ${inspect.token}` } })).body);
      expect(listed.tools.map((tool: { name: string }) => tool.name)).toEqual(['pack_echo', 'pack_upper']);
    } finally {
      await inspect.stop();
    }
  });
});
