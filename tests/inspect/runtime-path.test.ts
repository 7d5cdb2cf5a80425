/**
 * The inspector must not make a tool's call slower: nothing of it (server, page, Preact,
 * node:http) may be on the tool runtime's import path. A load trace of real tool runs shows
 * every module they resolve, and the bundle markers what source went into each file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TRACE, loadedSourceModules, traced } from '../bootstrap/sandbox.js';
import { ROOT, run } from '../support/process.js';

const dir = mkdtempSync(join(tmpdir(), 'twylt-inspect-trace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function trace(name: string, tool: string, payload: string): Promise<string[]> {
  const file = join(dir, `${name}.txt`);
  const result = await run([process.execPath, ...TRACE, join(ROOT, tool), payload], { env: { TWYLT_TRACE_FILE: file } });
  expect(result.code, result.stderr).toBe(0);
  return traced(file);
}

describe('the tool runtime loads nothing of twylt inspect', () => {
  for (const [name, tool, payload] of [
    ['probe call', 'build/examples/probe/tool.js', '{"name": "Ada", "count": 2, "kind": "probe", "point": {"x": 1, "y": 2}}'],
    ['probe describe', 'build/examples/probe/tool.js', '{"describe": "json_spec"}'],
    ['json-schema echo call', 'build/examples/echo_json_schema/tool.js', '{"text": "hi"}'],
  ]) {
    it(name, async () => {
      const loaded = await trace(name.replace(/\W+/g, '-'), tool!, payload!);
      const modules = loadedSourceModules(loaded);
      expect(modules).toContain('tool/run.ts'); // the trace and the markers work
      expect(modules.filter((path) => /^(inspect|server|toolset|cli)\//.test(path))).toEqual([]);
      expect(loaded.filter((url) => /\/dist\/inspect\/|\/preact\/|^node:http$/.test(url))).toEqual([]);
    });
  }
});
