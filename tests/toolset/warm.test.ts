/**
 * Warm processes (toolset/warm.ts, ADR 0026), against real tool processes: a warm call
 * answers exactly as a cold one, each call has a process of its own, a dead warm process
 * falls back to a cold start, the cap and the idle retirement hold, and a waiting process
 * whose consumer goes away never runs its tool, even beside an input.json.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TwyltClientError, type CallResult, type WarmSource } from 'twylt/client';
import { WarmCap, WarmPool, createRunner, describeToolset, type ToolEntry, type ToolRunner } from 'twylt/toolset';
import { describeForAgents } from 'twylt-ai';
import { example, fixture } from '../support/process.js';
import { isAlive, waitGone, waitUntilReadingStdin } from '../support/processes.js';
import { NO_PYTHON_REASON, noPython, pythonTool } from '../support/python.js';
import { sandbox } from '../guardrails/sandbox.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-warm-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => {
  const dir = join(scratch, `d${dirs++}`);
  mkdirSync(dir);
  return dir;
};

const runners: ToolRunner[] = [];
afterAll(() => {
  for (const runner of runners) runner.close();
});

/** A served tool's runner: described first, then made with its spec, as describeToolset does. */
async function served(entry: ToolEntry, defaults = {}): Promise<ToolRunner> {
  const spec = await createRunner(entry).spec();
  const runner = createRunner(entry, defaults, spec);
  runners.push(runner);
  return runner;
}

/** What a call gave, without its duration: a result, or the typed error and all it carries. */
async function outcome(call: Promise<CallResult>): Promise<unknown> {
  try {
    const { durationMs: _, ...rest } = await call;
    return { ok: rest };
  } catch (error) {
    if (!(error instanceof TwyltClientError)) throw error;
    const e = error as TwyltClientError & Record<string, unknown>;
    return { error: e.name, message: e.message, exitCode: e.exitCode, signal: e.signal, stdout: e.stdout, stderr: e.stderr, errorObject: e.error };
  }
}

/** The warm process a call took, to tell a warm call from a fallback. */
function watched(pool: WarmSource) {
  const taken: (number | undefined)[] = [];
  return { taken, source: { take: () => { const child = pool.take(); taken.push(child?.pid); return child; } } };
}

/** Cold (stdin) and warm answers of one input; the warm one must have come from a warm process. */
async function coldAndWarm(runner: ToolRunner, input: Record<string, unknown>) {
  const cold = await outcome(runner.client.call(input, { transport: 'stdin', numbers: 'text' }));
  const { taken, source } = watched(runner.warm!);
  const warm = await outcome(runner.client.call(input, { transport: 'stdin', numbers: 'text', warm: source }));
  expect(taken[0]).toBeTypeOf('number');
  return { cold, warm };
}

describe('a warm call returns exactly what a cold call returns', () => {
  const cases: [string, Record<string, unknown>, number][] = [
    ['success', { action: 'ok' }, 0],
    ['invalid input, exit 2', { action: 'nope' }, 2],
    ['invalid output, exit 3', { action: 'bad_output' }, 3],
    ['a protocol error, exit 4', { describe: 'nonsense' }, 4],
    ['a business exception, exit 5', { action: 'throw_error' }, 5],
    ['a process that exits by itself', { action: 'exit_itself' }, -1],
  ];
  it.each(cases)('TypeScript tool: %s', async (_, input, exit) => {
    const runner = await served({ command: fixture('behaviours'), warm: 1 });
    const { cold, warm } = await coldAndWarm(runner, input);
    expect(warm).toEqual(cold);
    if (exit > 0) expect((cold as { exitCode: number }).exitCode).toBe(exit);
  });

  const pyCases: [string, Record<string, unknown>, number][] = [
    ['success', { text: 'hi', times: 2 }, 0],
    ['invalid input, exit 2', { text: '' }, 2],
    ['a protocol error, exit 4', { describe: 'nonsense' }, 4],
  ];
  it.skipIf(noPython).each(pyCases)(`${noPython ? `[skipped: ${NO_PYTHON_REASON}] ` : ''}Python tool: %s`, async (_, input, exit) => {
    const runner = await served({ command: pythonTool(), warm: 1 });
    const { cold, warm } = await coldAndWarm(runner, input);
    expect(warm).toEqual(cold);
    if (exit > 0) expect((cold as { exitCode: number }).exitCode).toBe(exit);
  });

  it('guardrails: a denial (exit 6) and its incident line, as for a cold call', async () => {
    const box = sandbox();
    const log = join(box.logs, 'incidents.jsonl');
    const env = { TWYLT_GUARDRAILS: '1', TWYLT_WORKSPACE_ROOT: box.workspace, TWYLT_ALLOWED_CWD: box.runs, TWYLT_INCIDENT_LOG: log };
    const runner = await served({ command: example('list_directory'), cwd: box.outside, env, warm: 1 });
    const { cold, warm } = await coldAndWarm(runner, { path: '../outside' });
    // What differs between any two runs: the incident's id, time and process id.
    const volatile = (value: unknown) =>
      JSON.stringify(value)
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'ID')
        .replace(/\d{4}-\d\d-\d\dT[\d:.]+\+00:00/g, 'TIME')
        .replace(/pid\\?":\d+/g, 'pid":N');
    expect(volatile(warm)).toEqual(volatile(cold));
    expect((cold as { exitCode: number }).exitCode).toBe(6);
    const incidents = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(incidents.map((incident) => [incident.code, incident.requested_path])).toEqual([
      ['path_outside_workspace', '../outside'],
      ['path_outside_workspace', '../outside'],
    ]);
  });
});

describe('each call has a process of its own', () => {
  it('per-call state never reaches the next call; the environment is the one at pre-start', async () => {
    const dir = freshDir();
    const runner = await served({ command: fixture('warm_probe'), env: { WARM_PROBE_DIR: dir, WARM_PROBE_VALUE: 'pre-start' }, warm: 2 });
    const outputs: { pid: number; calls: number; env: string }[] = [];
    for (let i = 0; i < 6; i++) outputs.push((await runner.call({ note: `n${i}` })).output as never);
    expect(outputs.map((output) => output.calls)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(new Set(outputs.map((output) => output.pid)).size).toBe(6);
    expect(outputs.every((output) => output.env === 'pre-start')).toBe(true);
    const ran = readdirSync(dir).filter((name) => name.startsWith('ran-'));
    expect(ran).toHaveLength(6);
  });

  it('auto takes a waiting process; cli and file never do', async () => {
    const dir = freshDir();
    const runner = await served({ command: fixture('warm_probe'), env: { WARM_PROBE_DIR: dir }, warm: 1 });
    await waitUntilReadingStdin(runner.warm!.pids[0]!, 20_000);
    expect((await runner.call({ note: 'a' })).transport).toBe('stdin');
    expect((await runner.call({ note: 'b' }, { transport: 'cli' })).transport).toBe('cli');
    expect((await runner.call({ note: 'c' }, { transport: 'file' })).transport).toBe('file');
  });

  it('an entry set to cli or file gets no warm process', async () => {
    for (const transport of ['cli', 'file'] as const) {
      expect((await served({ command: fixture('warm_probe'), transport, warm: 2 })).warm).toBeUndefined();
    }
  });
});

describe('every consumer gets them', () => {
  it('twylt-ai: the warm option, and a call served by a waiting process', async () => {
    const dir = freshDir();
    const [tool] = await describeForAgents([{ command: fixture('warm_probe'), env: { WARM_PROBE_DIR: dir } }], { warm: 1 });
    runners.push(tool!.runner);
    const [pid] = tool!.runner.warm!.pids;
    const { output } = await tool!.run({ note: 'agent' });
    expect(output).toMatchObject({ pid, note: 'agent', calls: 1 });
  });
});

describe('a warm process that died', () => {
  it('exited while waiting: discarded, the call starts cold and answers', async () => {
    const dir = freshDir();
    const runner = await served({ command: fixture('warm_probe'), env: { WARM_PROBE_DIR: dir }, warm: 1 });
    const [pid] = runner.warm!.pids;
    process.kill(pid!, 'SIGKILL');
    await waitGone(pid!, 10_000);
    await new Promise<void>((resolve) => setImmediate(resolve));
    const result = await runner.call({ note: 'after' });
    expect(result.output).toMatchObject({ note: 'after', calls: 1 });
    expect((result.output as { pid: number }).pid).not.toBe(pid);
  });

  it('died as the call took it (before the consumer heard): the call starts cold, not an error', async () => {
    const dir = freshDir();
    const runner = await served({ command: fixture('warm_probe'), env: { WARM_PROBE_DIR: dir }, warm: 1 });
    const [pid] = runner.warm!.pids;
    await waitUntilReadingStdin(pid!, 20_000);
    process.kill(pid!, 'SIGKILL');
    // Gone, but the event loop has not run since: the pool still holds it as waiting.
    const end = Date.now() + 10_000;
    while (isAlive(pid!) && Date.now() < end) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    const { taken, source } = watched(runner.warm!);
    const result = await runner.client.call({ note: 'raced' }, { transport: 'stdin', warm: source }).catch((error: Error) => {
      throw new Error(`${error.message}; taken ${JSON.stringify(taken)} of ${pid}`);
    });
    expect(taken).toEqual([pid]);
    expect(result.output).toMatchObject({ note: 'raced', calls: 1 });
    expect((result.output as { pid: number }).pid).not.toBe(pid);
  });
});

describe('a waiting process whose consumer goes away', () => {
  it('reads "{" and the end of stdin: a protocol error, exit 4; it never runs on the input.json beside it', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'input.json'), JSON.stringify({ note: 'from input.json' }));
    const pool = new WarmPool({ size: 1, command: fixture('warm_probe'), cwd: dir, env: { WARM_PROBE_DIR: dir }, cap: new WarmCap(1), idleMs: 0 });
    const child = pool.take()!;
    await waitUntilReadingStdin(child.pid!, 20_000);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdout.resume();
    // What the consumer's death does to the pipe, without the keeper's kill.
    child.stdin.end();
    expect(await exited).toBe(4);
    expect(JSON.parse(stderr.trim().split('\n').pop()!).error).toMatchObject({ type: 'protocol_error', stage: 'transport' });
    expect(readdirSync(dir).filter((name) => name.startsWith('ran-'))).toEqual([]);
    expect(existsSync(join(dir, 'output.json'))).toBe(false);
    pool.close();
  });
});

describe('the cap and the idle time', () => {
  it('the total across tools holds: two tools of warm 3 under a cap of 4 start 4, and calls keep it', async () => {
    const dir = freshDir();
    const entry = (name: string): ToolEntry => ({ command: fixture('warm_probe'), env: { WARM_PROBE_DIR: dir }, name, warm: 3 });
    const tools = await describeToolset([entry('a'), entry('b')], { defaults: { maxWarm: 4 } });
    runners.push(...tools.map((tool) => tool.runner));
    const waiting = () => tools.reduce((sum, tool) => sum + tool.runner.warm!.size, 0);
    expect(waiting()).toBe(4);
    for (let i = 0; i < 4; i++) {
      await Promise.all(tools.map((tool) => tool.runner.call({ note: `${tool.name}${i}` })));
      expect(waiting()).toBeLessThanOrEqual(4);
    }
    const started = readdirSync(dir).filter((name) => name.startsWith('started-')).length;
    // 4 at first, then one replacement per warm call: never more.
    expect(started).toBeLessThanOrEqual(4 + 8);
  });

  it('a process unused for the idle time is retired, its process group killed; a call warms the tool again', async () => {
    const dir = freshDir();
    const runner = await served({ command: fixture('warm_probe'), env: { WARM_PROBE_DIR: dir }, warm: 2 }, { warmIdleMs: 300 });
    const pids = runner.warm!.pids;
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(await waitGone(pid, 15_000)).toBe(true);
    expect(runner.warm!.size).toBe(0);
    // The next call finds none waiting (it starts cold) and warms the tool again at once.
    expect(runner.warm!.take()).toBeUndefined();
    expect(runner.warm!.size).toBe(2);
  });

  it('close() kills every waiting process', async () => {
    const runner = await served({ command: fixture('warm_probe'), warm: 3 });
    const pids = runner.warm!.pids;
    runner.close();
    for (const pid of pids) expect(await waitGone(pid, 15_000)).toBe(true);
  });
});
