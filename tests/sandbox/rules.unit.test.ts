/**
 * The sandbox's pure rules, from the source, one table row each: the policy's defaults and
 * merge, the `--sandbox*` flags, and the host matcher of the filtering proxy. Fast, so that
 * mutation testing (docs/mutation.md, `npm run mutate -- sandbox`: tests/sandbox/*.unit.test.ts)
 * runs them for every mutant; the kernel sandbox itself is tested by the other files here.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { SpawnSandbox } from '../../packages/twylt/src/client/spawn.js';
import type { ToolEntry } from '../../packages/twylt/src/toolset/entry.js';
import type { PreparedSandbox } from '../../packages/twylt/src/toolset/sandbox/bwrap.js';
import { entrySandbox, openSandbox, sandboxForEntries, sandboxFromFlags } from '../../packages/twylt/src/toolset/sandbox/flags.js';
import { SandboxPolicyError } from '../../packages/twylt/src/toolset/sandbox/errors.js';
import { checkSandboxPolicy, mergeSandboxPolicies, resolveSandboxPolicy, SANDBOX_DEFAULTS, sandboxPolicyIssues, type SandboxPolicy } from '../../packages/twylt/src/toolset/sandbox/policy.js';
import { hostAllowed, isInternalAddress } from '../../packages/twylt/src/toolset/sandbox/proxy.js';

describe('the policy', () => {
  it('true, or an empty policy: the defaults (1 GiB, 256 processes, 60 CPU seconds), nothing allowed', () => {
    const defaults = { allowRead: [], allowWrite: [], allowNet: [], allowEnv: [], memoryMb: 1024, processes: 256, cpuSeconds: 60 };
    expect(resolveSandboxPolicy(true)).toEqual(defaults);
    expect(resolveSandboxPolicy({})).toEqual(defaults);
    expect(SANDBOX_DEFAULTS).toEqual({ memoryMb: 1024, processes: 256, cpuSeconds: 60 });
  });

  it('keeps what is given, 0 included (no limit), and copies the lists', () => {
    const given = { allowRead: ['/r'], allowWrite: ['/w'], allowNet: ['h'], allowEnv: ['E'], memoryMb: 0, processes: 0, cpuSeconds: 0 };
    const resolved = resolveSandboxPolicy(given);
    expect(resolved).toEqual(given);
    expect(resolved.allowRead).not.toBe(given.allowRead);
  });

  it('an entry\'s policy over the consumer\'s: lists joined (the consumer\'s first), limits from the entry when it sets them', () => {
    const base = { allowRead: ['/a'], allowNet: ['x'], memoryMb: 100, processes: 10, cpuSeconds: 5 };
    expect(mergeSandboxPolicies(base, { allowRead: ['/b'], allowEnv: ['E'], memoryMb: 0 })).toEqual({
      allowRead: ['/a', '/b'],
      allowWrite: [],
      allowNet: ['x'],
      allowEnv: ['E'],
      memoryMb: 0,
      processes: 10,
      cpuSeconds: 5,
    });
    expect(mergeSandboxPolicies({}, { allowWrite: ['/w'], processes: 3, cpuSeconds: 2 })).toMatchObject({ allowWrite: ['/w'], processes: 3, cpuSeconds: 2, memoryMb: undefined });
    expect(mergeSandboxPolicies(base, {})).toMatchObject({ memoryMb: 100, processes: 10, cpuSeconds: 5 });
  });
});

describe('the one policy check (sandboxPolicyIssues, checkSandboxPolicy)', () => {
  const HOST_FORMS = 'takes HOST, HOST:PORT or *.DOMAIN';
  const bad = (policy: unknown) => sandboxPolicyIssues(policy as SandboxPolicy);

  it('an empty policy, and one with every field right, 0 limits included: no issue', () => {
    expect(bad({})).toEqual([]);
    const right = { allowRead: ['/r', 'rel'], allowWrite: ['/w'], allowNet: ['example.com', 'h:443', '*.example.com:8443', '10.0.0.1', '[::1]:80'], allowEnv: ['HOME'], memoryMb: 0, processes: 1, cpuSeconds: 2 ** 31 };
    expect(bad(right)).toEqual([]);
  });

  it.each(['allowRead', 'allowWrite', 'allowNet', 'allowEnv'])('%s that is not a list: one issue naming the field and the value, its items not read', (key) => {
    expect(bad({ [key]: 'x' })).toEqual([{ path: key, message: 'must be a list of strings', value: 'x' }]);
    expect(bad({ [key]: { 0: 'x' } })).toEqual([{ path: key, message: 'must be a list of strings', value: { 0: 'x' } }]);
  });

  it.each(['allowRead', 'allowWrite', 'allowNet', 'allowEnv'])('%s: each item that is not a non-empty string, by its index', (key) => {
    expect(bad({ [key]: ['ok.example', '', 3, null] })).toEqual([
      { path: `${key}[1]`, message: 'must be a non-empty string', value: '' },
      { path: `${key}[2]`, message: 'must be a non-empty string', value: 3 },
      { path: `${key}[3]`, message: 'must be a non-empty string', value: null },
    ]);
  });

  it('allowNet alone takes host forms: a URL, a path or a wildcard inside a name is an issue there, and nowhere else', () => {
    expect(bad({ allowNet: ['example.com', 'https://example.com', '/etc', 'a*b.example.com'] })).toEqual([
      { path: 'allowNet[1]', message: HOST_FORMS, value: 'https://example.com' },
      { path: 'allowNet[2]', message: HOST_FORMS, value: '/etc' },
      { path: 'allowNet[3]', message: HOST_FORMS, value: 'a*b.example.com' },
    ]);
    expect(bad({ allowRead: ['https://example.com'], allowWrite: ['/etc'], allowEnv: ['a*b'] })).toEqual([]);
  });

  it.each(['memoryMb', 'processes', 'cpuSeconds'])('%s: a whole number from 0, else one issue with the value', (key) => {
    for (const fine of [0, 1, 4096]) expect(bad({ [key]: fine })).toEqual([]);
    for (const wrong of [-1, 1.5, '5', Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, null]) {
      expect(bad({ [key]: wrong })).toEqual([{ path: key, message: 'must be a whole number (0: no limit)', value: wrong }]);
    }
  });

  it('every issue of a policy, lists first in their order, then limits', () => {
    expect(bad({ cpuSeconds: -1, allowEnv: [''], memoryMb: 'x', allowRead: 7 }).map((issue) => issue.path)).toEqual(['allowRead', 'allowEnv[0]', 'memoryMb', 'cpuSeconds']);
  });

  it('checkSandboxPolicy: the same policy back when right (true included); else a SandboxPolicyError naming where and each issue', () => {
    const right: SandboxPolicy = { allowNet: ['example.com'] };
    expect(checkSandboxPolicy(right)).toBe(right);
    expect(checkSandboxPolicy(true)).toBe(true);
    const thrown = (() => {
      try {
        checkSandboxPolicy({ allowNet: ['http://x'], memoryMb: -1 });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(SandboxPolicyError);
    expect((thrown as Error).message).toBe('the sandbox policy is not valid:\n  allowNet[0]: takes HOST, HOST:PORT or *.DOMAIN, got "http://x"\n  memoryMb: must be a whole number (0: no limit), got -1');
    expect(() => checkSandboxPolicy({ allowEnv: [''] }, 'tools[0].sandbox')).toThrow(/^tools\[0\]\.sandbox is not valid:\n {2}allowEnv\[0\]: must be a non-empty string, got ""$/);
  });
});

describe('the --sandbox flags', () => {
  const cwd = '/work/here';
  const cases: [string, Record<string, unknown>, unknown][] = [
    ['none', {}, undefined],
    ['--sandbox=false', { sandbox: false, 'sandbox-memory': '5' }, undefined],
    ['--sandbox alone', { sandbox: true }, {}],
    ['any --sandbox-* implies it', { 'sandbox-allow-env': ['TOKEN'] }, { allowEnv: ['TOKEN'] }],
    ['paths: relative ones from the cwd', { 'sandbox-allow-read': ['/abs', 'rel'], 'sandbox-allow-write': ['out'] }, { allowRead: ['/abs', '/work/here/rel'], allowWrite: ['/work/here/out'] }],
    ['hosts as given', { 'sandbox-allow-net': ['example.com', 'api.example.com:8443', '*.example.org', '[::1]:80', '[::1]', '127.0.0.1'] }, { allowNet: ['example.com', 'api.example.com:8443', '*.example.org', '[::1]:80', '[::1]', '127.0.0.1'] }],
    ['limits as numbers, 0 kept', { 'sandbox-memory': '0', 'sandbox-processes': '64', 'sandbox-cpu-seconds': '7' }, { memoryMb: 0, processes: 64, cpuSeconds: 7 }],
  ];
  // Strictly: a flag not given leaves its key out, not set to undefined.
  for (const [what, values, expected] of cases) it(what, () => expect(sandboxFromFlags(values, cwd)).toStrictEqual(expected));

  const refused: [Record<string, unknown>, string][] = [
    [{ 'sandbox-memory': '1.5' }, '--sandbox-memory takes a whole number (0: no limit); got "1.5"'],
    [{ 'sandbox-processes': '-1' }, '--sandbox-processes takes a whole number (0: no limit); got "-1"'],
    [{ 'sandbox-cpu-seconds': '9'.repeat(20) }, `--sandbox-cpu-seconds takes a whole number (0: no limit); got "${'9'.repeat(20)}"`],
    [{ 'sandbox-memory': ' 5' }, '--sandbox-memory takes a whole number (0: no limit); got " 5"'],
    [{ 'sandbox-allow-net': ['http://example.com'] }, '--sandbox-allow-net takes HOST, HOST:PORT or *.DOMAIN; got "http://example.com"'],
    [{ 'sandbox-allow-net': ['example.com:123456'] }, '--sandbox-allow-net takes HOST, HOST:PORT or *.DOMAIN; got "example.com:123456"'],
    [{ 'sandbox-allow-net': ['a.*.example.com'] }, '--sandbox-allow-net takes HOST, HOST:PORT or *.DOMAIN; got "a.*.example.com"'],
    [{ 'sandbox-allow-net': ['x example.com'] }, '--sandbox-allow-net takes HOST, HOST:PORT or *.DOMAIN; got "x example.com"'],
    [{ 'sandbox-allow-net': ['[::1'] }, '--sandbox-allow-net takes HOST, HOST:PORT or *.DOMAIN; got "[::1"'],
    [{ 'sandbox-allow-net': ['x[::1]'] }, '--sandbox-allow-net takes HOST, HOST:PORT or *.DOMAIN; got "x[::1]"'],
    [{ 'sandbox-allow-net': ['[::1]:80x'] }, '--sandbox-allow-net takes HOST, HOST:PORT or *.DOMAIN; got "[::1]:80x"'],
  ];
  for (const [values, message] of refused) it(`refuses ${JSON.stringify(values)}`, () => expect(() => sandboxFromFlags(values, cwd)).toThrow(message));
});

describe('the host matcher', () => {
  const cases: [string[], string, number, boolean][] = [
    [['example.com'], 'example.com', 443, true],
    [['example.com'], 'example.com', 80, true],
    [['example.com'], 'example.com', 8080, false],
    [['example.com'], 'EXAMPLE.com', 443, true],
    [['Example.COM'], 'example.com', 443, true],
    [['example.com'], 'www.example.com', 443, false],
    [['example.com'], 'example.com.evil.net', 443, false],
    [['example.com:8443'], 'example.com', 8443, true],
    [['example.com:8443'], 'example.com', 443, false],
    [['*.example.com'], 'api.example.com', 443, true],
    [['*.example.com'], 'a.b.example.com', 80, true],
    [['*.example.com'], 'evilexample.com', 443, false],
    [['*.example.com:9000'], 'api.example.com', 9000, true],
    [['*.example.com:9000'], 'api.example.com', 443, false],
    [['[::1]:8080'], '[::1]', 8080, true],
    [['[::1]:8080'], '::1', 8080, true],
    [['other.org', 'example.com'], 'example.com', 443, true],
    [[], 'example.com', 443, false],
    // Only a bracket that opens or closes the whole host is stripped: one inside is part of the name.
    [['ab'], 'a[b', 443, false],
    [['ab'], 'a]b', 443, false],
    [['ab'], '[ab]', 443, true],
    // In an entry too (a manifest's allowNet is not the flag's checked text).
    [['a[b'], 'ab', 443, false],
    [['a]b'], 'ab', 443, false],
  ];
  for (const [allowed, host, port, expected] of cases) {
    it(`${JSON.stringify(allowed)} ${expected ? 'allows' : 'refuses'} ${host}:${port}`, () => expect(hostAllowed(allowed, host, port)).toBe(expected));
  }
});

describe("which entries get a sandbox (sandboxForEntries, entrySandbox, openSandbox)", () => {
  const scratch = mkdtempSync(join(tmpdir(), 'twylt-rules-unit-'));
  /** A stand-in for bwrap that reports no capability (the probe's only question here). */
  const bwrap = join(scratch, 'bwrap');
  writeFileSync(bwrap, "#!/bin/sh\nprintf 'CapEff:\\t0000000000000000\\n'\n");
  chmodSync(bwrap, 0o755);
  const NONE = { memoryMb: 0, processes: 0, cpuSeconds: 0 };
  const opened: PreparedSandbox[] = [];
  afterAll(async () => {
    for (const sandbox of opened) await sandbox.close();
    rmSync(scratch, { recursive: true, force: true });
  });
  const entry = (sandbox?: ToolEntry['sandbox'], more: Partial<ToolEntry> = {}): ToolEntry => ({ command: ['tool'], ...(sandbox !== undefined ? { sandbox } : {}), ...more });

  it('none without a policy and without an entry asking for one (false and unset do not)', async () => {
    for (const entries of [[], [entry()], [entry(false)], [entry(false), entry()]]) expect(await sandboxForEntries(undefined, entries, { bwrap, cgroup: null })).toBeUndefined();
  });

  it("the consumer's policy when it has one; the default policy when only an entry asks (true or a policy of its own)", async () => {
    const given = await sandboxForEntries(NONE, [], { bwrap, cgroup: null });
    opened.push(given!);
    expect(given!.policy).toEqual({ ...NONE, allowRead: [], allowWrite: [], allowNet: [], allowEnv: [] });
    for (const asking of [entry(true), entry({ allowEnv: ['X'] })]) {
      const base = { version: 2 as const, dirs: [mkdtempSync(join(scratch, 'cg-'))] };
      const prepared = await sandboxForEntries(undefined, [entry(false), asking], { bwrap, cgroup: base });
      opened.push(prepared!);
      expect(prepared!.policy).toEqual(resolveSandboxPolicy(true));
    }
  });

  it("every policy checked before any sandbox is prepared: the consumer's, and each entry's own, named by its command", async () => {
    const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: Error) => error);
    const consumer = await refusal(sandboxForEntries({ ...NONE, memoryMb: -1 }, [], { bwrap, cgroup: null }));
    expect(consumer).toBeInstanceOf(SandboxPolicyError);
    expect((consumer as Error).message).toBe('the sandbox policy is not valid:\n  memoryMb: must be a whole number (0: no limit), got -1');
    const own = await refusal(sandboxForEntries(NONE, [entry(true), entry({ allowEnv: [''] }, { command: ['my tool', '-x'] })], { bwrap, cgroup: null }));
    expect(own).toBeInstanceOf(SandboxPolicyError);
    expect((own as Error).message).toBe('the sandbox policy of "my tool" -x is not valid:\n  allowEnv[0]: must be a non-empty string, got ""');
  });

  it("an entry's launcher: none for sandbox false, none unasked without a prepared sandbox, refused when asked without one; else forTool with its cwd, name and own policy", () => {
    const forTool = vi.fn((options: unknown) => ({ options }) as unknown as SpawnSandbox);
    const prepared = { forTool } as unknown as PreparedSandbox;
    expect(entrySandbox(entry(false), prepared)).toBeUndefined();
    expect(entrySandbox(entry(), undefined)).toBeUndefined();
    expect(entrySandbox(entry(false), undefined)).toBeUndefined();
    expect(() => entrySandbox(entry(true, { command: ['tool', 'x'] }), undefined)).toThrow(new Error('the tool ["tool","x"] asks for a sandbox, and its consumer prepared none (sandboxForEntries)'));
    expect(() => entrySandbox(entry({}), undefined)).toThrow('asks for a sandbox');
    expect(forTool).not.toHaveBeenCalled();
    entrySandbox(entry(undefined, { cwd: '/w', name: 'n' }), prepared);
    entrySandbox(entry(true), prepared);
    entrySandbox(entry({ allowNet: ['h'] }, { cwd: '/v' }), prepared);
    expect(forTool.mock.calls).toEqual([
      [{ workspace: '/w', name: 'n', policy: undefined }],
      [{ workspace: process.cwd(), name: undefined, policy: undefined }],
      [{ workspace: '/v', name: undefined, policy: { allowNet: ['h'] } }],
    ]);
  });

  it('openSandbox: the flags\' sandbox, prepared; none without a flag', async () => {
    expect(await openSandbox({}, '/work/here')).toBeUndefined();
    process.env.TWYLT_SANDBOX_BWRAP = bwrap;
    try {
      const sandbox = await openSandbox({ 'sandbox-memory': '0', 'sandbox-processes': '0', 'sandbox-cpu-seconds': '0', 'sandbox-allow-env': ['E'] }, '/work/here');
      opened.push(sandbox!);
      expect(sandbox!.policy).toEqual({ ...NONE, allowRead: [], allowWrite: [], allowNet: [], allowEnv: ['E'] });
    } finally {
      delete process.env.TWYLT_SANDBOX_BWRAP;
    }
  });
});

describe('isInternalAddress: an IPv4 address carried in an IPv6 one', () => {
  // Only the IPv4-mapped, -compatible and NAT64 prefixes carry an IPv4 address to check as such,
  // dotted at the end or (mapped) in hex as the last two groups.
  const rows: [string, boolean][] = [
    ['::127.0.0.1', true],
    ['1::127.0.0.1', false],
    ['2001:db8::10.0.0.1', false],
    // Octets of several digits, in each place.
    ['::ffff:127.100.100.100', true],
    ['64:ff9b::192.168.100.200', true],
    ['::ffff:100.64.10.10', true],
    // The `::ffff:HHHH:HHHH` form: the IPv4 address in its last 32 bits, each group read (808:808 is 8.8.8.8, not zero).
    ['::ffff:7f00:1', true],
    ['::ffff:a00:1', true],
    ['::ffff:808:808', false],
    // The mapped prefix not at the start, or more groups after it: not an IPv4-mapped address.
    ['2001:db8::ffff:7f00:1', false],
    ['::ffff:7f00:1:2', false],
  ];
  for (const [address, expected] of rows) it(`${address}: ${expected ? 'internal' : 'public'}`, () => expect(isInternalAddress(address)).toBe(expected));
});
