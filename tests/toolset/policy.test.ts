/**
 * One policy per tool (toolset/policy.ts, ADR 0031): resolved once from the entry and the
 * consumer's defaults, and the defaults handed on by reference, so that no consumer loses a
 * setting on the way. The warm cap is the setting that was lost (twylt-ai dropped `warmCap`,
 * a tool twylt-mcp described again got a cap of its own): the tests count real waiting
 * processes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILT_IN_DEFAULTS, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_WARM, DEFAULT_TIMEOUT_MS, DEFAULT_WARM_IDLE_MS, WarmCap, assembleToolset, createRunner, resolveLimits, resolvePolicy, type ToolRunner } from 'twylt/toolset';
import { describeForAgents } from 'twylt-ai';
import { ServedTools, describeTools, retryLeftOut } from 'twylt-mcp';
import { ROOT, fixture } from '../support/process.js';
import { waitFor } from '../support/mcp.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-policy-'));
const runners: ToolRunner[] = [];
afterAll(() => {
  for (const runner of runners) runner.close();
  rmSync(scratch, { recursive: true, force: true });
});

const waiting = (tools: readonly { runner: ToolRunner }[]) => tools.reduce((sum, tool) => sum + (tool.runner.warm?.size ?? 0), 0);

describe('resolveLimits: the one chain of every number', () => {
  it("is TWYLT's built-ins for a tool that sets none, the consumer's over them, the entry's over both", () => {
    expect(BUILT_IN_DEFAULTS).toEqual({ timeoutMs: DEFAULT_TIMEOUT_MS, maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES, warm: 0, maxWarm: DEFAULT_MAX_WARM, warmIdleMs: DEFAULT_WARM_IDLE_MS });
    expect(resolveLimits({})).toEqual({ timeoutMs: DEFAULT_TIMEOUT_MS, describeTimeoutMs: DEFAULT_TIMEOUT_MS, maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES, warm: 0, warmIdleMs: DEFAULT_WARM_IDLE_MS });
    // A scan's describe time-out: the consumer's describe time-out, else its call time-out.
    expect(resolveLimits({}, { timeoutMs: 7000 }).describeTimeoutMs).toBe(7000);
    expect(resolveLimits({}, { timeoutMs: 7000, describeTimeoutMs: 900 }).describeTimeoutMs).toBe(900);
    // An entry's own call time-out is its describe time-out too, over the consumer's.
    expect(resolveLimits({ timeoutMs: 100 }, { timeoutMs: 7000, describeTimeoutMs: 900 })).toMatchObject({ timeoutMs: 100, describeTimeoutMs: 900 });
    expect(resolveLimits({ timeoutMs: 100 }, { timeoutMs: 7000 })).toMatchObject({ timeoutMs: 100, describeTimeoutMs: 100 });
    const entry = { command: ['tool'], timeoutMs: 5, transport: 'stdin' as const, warm: 3 };
    const defaults = { maxOutputBytes: 77, warmIdleMs: 9 };
    expect(resolvePolicy(entry, defaults)).toMatchObject(resolveLimits(entry, defaults));
  });
});

describe('assembleToolset', () => {
  it('collects the config files then the commands, and hands the defaults on by reference when there is no sandbox', async () => {
    const file = join(scratch, 'assemble.json');
    writeFileSync(file, JSON.stringify({ tools: [{ command: ['a'] }] }));
    const defaults = Object.freeze({ timeoutMs: 1234 });
    const reported: string[] = [];
    const set = await assembleToolset({ configs: [file], commands: [['b', '--flag']], scans: [], defaults }, (line) => reported.push(line));
    expect(set.entries).toEqual([{ command: ['a'], cwd: scratch }, { command: ['b', '--flag'] }]);
    expect(set.defaults).toBe(defaults);
    expect(set.sandbox).toBeUndefined();
    expect(reported).toEqual([]);
    await expect(assembleToolset({ configs: [], commands: [], scans: [join(scratch, 'absent')], defaults }, () => {})).rejects.toThrow(/--scan .*absent: not a folder/);
  });
});

describe('resolvePolicy', () => {
  it("takes the entry's own settings first, then the consumer's defaults, then TWYLT's", () => {
    const defaults = { timeoutMs: 7000, maxOutputBytes: 999, warm: 2, warmIdleMs: 50 };
    const own = resolvePolicy({ command: ['tool'], timeoutMs: 100, describeTimeoutMs: 200, maxOutputBytes: 300, warm: 1, transport: 'stdin' }, defaults);
    expect(own).toMatchObject({ timeoutMs: 100, describeTimeoutMs: 200, maxOutputBytes: 300, warm: 1, transport: 'stdin', warmIdleMs: 50 });
    expect(resolvePolicy({ command: ['tool'] }, defaults)).toMatchObject({ timeoutMs: 7000, describeTimeoutMs: 7000, maxOutputBytes: 999, warm: 2, transport: 'auto' });
    expect(resolvePolicy({ command: ['tool'] })).toMatchObject({ timeoutMs: DEFAULT_TIMEOUT_MS, describeTimeoutMs: DEFAULT_TIMEOUT_MS, maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES, warm: 0 });
    // Only stdin calls take a warm process.
    expect(resolvePolicy({ command: ['tool'], transport: 'cli' }, defaults).warm).toBe(0);
  });

  it("is frozen, removes the consumer's own settings from the tool's environment and keeps the entry's", () => {
    process.env.TWYLT_MCP_TOKEN_FOR_TEST = 'secret';
    try {
      const policy = resolvePolicy({ command: ['tool'], env: { ANSWER: '42' } }, {});
      expect(Object.isFrozen(policy) && Object.isFrozen(policy.env)).toBe(true);
      expect(policy.env).toMatchObject({ ANSWER: '42', TWYLT_ERROR_FORMAT: 'json', INPUT_DESCRIBE: undefined, TWYLT_MCP_TOKEN_FOR_TEST: undefined });
      expect(Object.hasOwn(policy.env, 'TWYLT_MCP_TOKEN_FOR_TEST')).toBe(true);
    } finally {
      delete process.env.TWYLT_MCP_TOKEN_FOR_TEST;
    }
  });

  it('is what a runner runs under: one warm cap for every runner of one defaults object', async () => {
    const entry = { command: fixture('warm_probe'), warm: 2 };
    const spec = await createRunner(entry).spec();
    const defaults = { maxWarm: 3 };
    const made = [createRunner(entry, defaults, spec), createRunner(entry, defaults, spec)];
    runners.push(...made);
    expect(made[0]!.policy.warmCap).toBe(made[1]!.policy.warmCap);
    expect(made.map((runner) => runner.warm!.size).sort()).toEqual([1, 2]);
  });
});

describe('every consumer hands its defaults on whole', () => {
  it("twylt-ai: a warmCap given is the one its tools share (it was dropped: each set got a cap of 8)", async () => {
    const cap = new WarmCap(2);
    const entry = (name: string) => ({ command: fixture('warm_probe'), name, warm: 2 });
    const tools = await describeForAgents([entry('a'), entry('b')], { warmCap: cap });
    runners.push(...tools.map((tool) => tool.runner));
    expect(tools[0]!.runner.policy.warmCap).toBe(cap);
    expect([waiting(tools), cap.used]).toEqual([2, 2]);
  });

  it('twylt-mcp: a tool described again after start shares the warm cap of the tools served at start', async () => {
    const marker = join(scratch, 'ready');
    const late = { command: [process.execPath, `${ROOT}tests/fixtures/mcp/late.mjs`, marker], warm: 2 };
    const defaults = { maxWarm: 2 };
    const leftOut: (typeof late)[] = [];
    const served = new ServedTools(await describeTools([{ command: fixture('warm_probe'), warm: 2 }, late], { defaults, onLeftOut: (entry) => leftOut.push(entry as typeof late) }));
    expect(leftOut).toHaveLength(1);
    const retries = retryLeftOut(leftOut, served, { defaults, describeRetryMs: 50 });
    try {
      writeFileSync(marker, '');
      await waitFor(() => served.current.length === 2, 'the late tool joins', 20_000);
      runners.push(...served.current.map((tool) => tool.runner));
      expect(served.current[0]!.runner.policy.warmCap).toBe(served.current[1]!.runner.policy.warmCap);
      expect(waiting(served.current)).toBe(2);
    } finally {
      retries.stop();
    }
  });
});
