/**
 * A tool that leaves a grandchild in a session of its own holding its stdout and stderr
 * (issue 17): no process-group kill reaches that grandchild, and its pipes stay open for
 * its whole life (30 s here). The client must settle on the tool's own exit and on the
 * time-out, never on the grandchild; `twylt call` and the MCP bridge with it.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TimeoutError, TwyltClient } from '../../packages/twylt/src/client/index.js';
import { BRIDGE_CLI, bridgeEnv, waitFor } from '../support/mcp.js';
import { isAlive } from '../support/processes.js';
import { runTwylt } from '../support/twylt-cli.js';

const ORPHAN = [process.execPath, fileURLToPath(new URL('../fixtures/robustness/orphan.mjs', import.meta.url))];
/** The grandchild's life; every bound below is far shorter, so waiting on it fails them. */
const ORPHAN_SECONDS = 30;
/** A call must end well before the grandchild would: the slack is for a busy machine. */
const PROMPT_MS = 10_000;

const scratch = mkdtempSync(join(tmpdir(), 'twylt-orphan-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let files = 0;
const pidFiles: string[] = [];
/** A file the fixture writes its grandchild's pid to; the grandchild is killed after the test. */
function pidFile(): string {
  const file = join(scratch, `grandchild-${files++}`);
  pidFiles.push(file);
  return file;
}
const grandchildOf = (file: string) => Number(readFileSync(file, 'utf8'));
afterEach(() => {
  for (const file of pidFiles.splice(0)) {
    if (!existsSync(file)) continue;
    try {
      process.kill(grandchildOf(file), 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

const env = (file: string) => ({ ORPHAN_PID_FILE: file, ORPHAN_SECONDS: String(ORPHAN_SECONDS) });

describe('a grandchild in its own session holding the pipes', () => {
  it('the client returns the result as soon as the tool exits', async () => {
    const file = pidFile();
    const started = Date.now();
    const result = await new TwyltClient([...ORPHAN, 'exit'], { env: env(file), timeoutMs: PROMPT_MS }).call({});
    expect(result.output).toEqual({ ok: true });
    expect(Date.now() - started).toBeLessThan(PROMPT_MS);
    // The case is real: the grandchild is still there, and the client did not wait for it.
    expect(isAlive(grandchildOf(file))).toBe(true);
  });

  it('the time-out still holds for a tool that hangs', async () => {
    const file = pidFile();
    const started = Date.now();
    const error = await new TwyltClient([...ORPHAN, 'hang'], { env: env(file) }).call({}, { timeoutMs: 1500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).stderr).toContain(`grandchild ${grandchildOf(file)}`);
    expect(Date.now() - started).toBeLessThan(PROMPT_MS);
  });

  it('twylt call --timeout 3000 prints the result and exits 0 at once', async () => {
    const file = pidFile();
    const started = Date.now();
    const run = await runTwylt(['call', '--timeout', '3000', '--input', '{}', '--', ...ORPHAN, 'exit'], { env: env(file) });
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(JSON.parse(run.stdout)).toEqual({ ok: true });
    expect(Date.now() - started).toBeLessThan(PROMPT_MS);
  });

  it('twylt call --timeout 1500 on a hanging tool ends with the time-out', async () => {
    const file = pidFile();
    const started = Date.now();
    const run = await runTwylt(['call', '--timeout', '1500', '--input', '{}', '--', ...ORPHAN, 'hang'], { env: env(file) });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('TimeoutError: tool did not finish within 1500 ms and was killed');
    expect(Date.now() - started).toBeLessThan(PROMPT_MS);
  });
});

describe('the MCP bridge over stdio with such a tool', () => {
  /** `twylt-mcp --config` serving the fixture, spoken to in raw JSON-RPC lines. */
  function startBridge(mode: 'exit' | 'hang', file: string) {
    const config = join(scratch, `tools-${files++}.json`);
    writeFileSync(config, JSON.stringify({ tools: [{ command: [...ORPHAN, mode], env: env(file), timeoutMs: PROMPT_MS }] }));
    const child = spawn(process.execPath, [BRIDGE_CLI, '--config', config], { env: bridgeEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const answers = new Map<number, Record<string, any>>();
    let buffered = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) if (line.trim()) answers.set(JSON.parse(line).id, JSON.parse(line));
    });
    let exited = false;
    child.on('exit', () => (exited = true));
    const send = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'orphan-test', version: '0' } } });
    send({ method: 'notifications/initialized' });
    return { child, answers, send, exited: () => exited };
  }
  let bridge: ReturnType<typeof startBridge> | undefined;
  afterEach(() => {
    if (bridge && !bridge.exited()) bridge.child.kill('SIGKILL');
    bridge = undefined;
  });

  it('answers the tools/call at once, then exits when its stdin closes', async () => {
    const file = pidFile();
    bridge = startBridge('exit', file);
    const { answers, send, child } = bridge;
    await waitFor(() => answers.has(1), 'the initialize answer', PROMPT_MS);
    const started = Date.now();
    send({ id: 2, method: 'tools/call', params: { name: 'orphan', arguments: {} } });
    await waitFor(() => answers.has(2), 'the tools/call answer', PROMPT_MS);
    expect(Date.now() - started).toBeLessThan(PROMPT_MS);
    expect(answers.get(2)!.result).toMatchObject({ structuredContent: { ok: true } });
    expect(answers.get(2)!.result.isError).toBeFalsy();
    expect(isAlive(grandchildOf(file))).toBe(true);

    child.stdin.end();
    await waitFor(bridge.exited, 'the bridge to exit after its stdin closed', PROMPT_MS);
  });

  it('exits when its stdin closes during a call to a tool that hangs', async () => {
    const file = pidFile();
    bridge = startBridge('hang', file);
    const { answers, send, child } = bridge;
    await waitFor(() => answers.has(1), 'the initialize answer', PROMPT_MS);
    send({ id: 2, method: 'tools/call', params: { name: 'orphan', arguments: {} } });
    // The tool is running once its grandchild has named itself.
    await waitFor(() => existsSync(file), 'the tool to start', PROMPT_MS);
    child.stdin.end();
    await waitFor(bridge.exited, 'the bridge to exit after its stdin closed', PROMPT_MS);
  });
});
