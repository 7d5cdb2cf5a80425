/**
 * twylt's launcher (bootstrap/launch.ts, ADR 0035), the command a scan records for JavaScript
 * and TypeScript tools: it imports the tool while the input is still to come, so that a warm
 * process has it loaded before its call; it resolves twylt itself for a tool whose project
 * has none; and it still answers a requirements request from the source, once.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startBridge, waitFor } from '../support/mcp.js';
import { ROOT, run } from '../support/process.js';
import { scratch } from './support.js';

const LAUNCHER = join(ROOT, 'packages/twylt/dist/bootstrap/launch.js');
const dir = scratch('ts-launcher');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A defineTool tool with JSON Schemas (no package but twylt, which its folder does not have) that notes each load in `loads`. */
function writeTool(folder: string, loads: string): string {
  mkdirSync(folder, { recursive: true });
  const schema = (key: string) => `{ type: 'object', properties: { ${key}: { type: 'string' } }, required: ['${key}'], additionalProperties: false }`;
  writeFileSync(
    join(folder, 'tool.mjs'),
    `import { appendFileSync } from 'node:fs';
import { defineTool } from 'twylt';
appendFileSync(${JSON.stringify(loads)}, process.pid + '\\n');
defineTool({
  name: 'reverse',
  version: '1.0.0',
  requirements: { tool: 'npm', format: 'package.json', content: '{"dependencies": {}}' },
  inputSchema: ${schema('text')},
  outputSchema: ${schema('reversed')},
  biz: ({ text }) => ({ reversed: [...text].reverse().join('') }),
}).run();
`,
  );
  return join(folder, 'tool.mjs');
}

const loadsIn = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

describe('the launcher with the input still to come', () => {
  it('has imported the tool before a byte of input arrives, then runs the call it is given', async () => {
    const loads = join(dir, 'ahead.log');
    const tool = writeTool(join(dir, 'ahead'), loads);
    const child = spawn(process.execPath, [LAUNCHER, tool], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((done) => child.on('close', done));
    try {
      // Stdin stays open and empty: only a launcher that imports first gets this far.
      await waitFor(() => loadsIn(loads).includes(String(child.pid)), 'the tool loaded before its input', 30_000);
      expect(stdout).toBe('');
      child.stdin.end('{"text": "warm"}');
      expect(await exited, stderr).toBe(0);
      expect(JSON.parse(stdout)).toEqual({ reversed: 'mraw' });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('answers requirements from the source once, and the loaded tool ends with it', async () => {
    const loads = join(dir, 'requirements.log');
    const tool = writeTool(join(dir, 'requirements'), loads);
    const result = await run([process.execPath, LAUNCHER, tool], { cwd: dir, input: '{"describe": "requirements"}' });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({ tool: 'npm', format: 'package.json', content: '{"dependencies": {}}' });
    const spec = await run([process.execPath, LAUNCHER, tool], { cwd: dir, input: '{"describe": "json_spec"}' });
    expect(spec.code, spec.stderr).toBe(0);
    expect(JSON.parse(spec.stdout)).toMatchObject({ name: 'reverse', inputSchema: { required: ['text'] } });
  });

  it('bad input through the launcher: the tool’s own error and exit code, nothing on stdout', async () => {
    const tool = writeTool(join(dir, 'bad'), join(dir, 'bad.log'));
    for (const input of ['{"text": 5}', '{"text": ']) {
      const result = await run([process.execPath, LAUNCHER, tool], { cwd: dir, input });
      expect(result.stdout, input).toBe('');
      const malformed = input.endsWith(' ');
      expect(result.code, input).toBe(malformed ? 4 : 2);
      expect(JSON.parse(result.stderr).error.type, input).toBe(malformed ? 'protocol_error' : 'validation_error');
    }
  });
});

describe('a warm process of twylt-mcp running a tool through the launcher', () => {
  it('has loaded the tool before its call is made', async () => {
    const loads = join(dir, 'warm.log');
    const tool = writeTool(join(dir, 'warm'), loads);
    const bridge = await startBridge(['--warm', '1', '--', process.execPath, LAUNCHER, tool]);
    try {
      expect((await bridge.client.listTools()).tools.map((entry) => entry.name)).toEqual(['reverse']);
      // The describe, then the waiting process: two loads, and no call made yet.
      await waitFor(() => loadsIn(loads).length >= 2, 'the warm process loaded the tool', 30_000);
      const result = await bridge.client.callTool({ name: 'reverse', arguments: { text: 'abc' } });
      expect(result.structuredContent).toEqual({ reversed: 'cba' });
      // The call took the waiting process: its load came before the call, none during it but the replacement's.
      await waitFor(() => loadsIn(loads).length >= 3, 'the replacement loaded the tool', 30_000);
      expect(loadsIn(loads)).toHaveLength(3);
    } finally {
      await bridge.close();
    }
  });
});
