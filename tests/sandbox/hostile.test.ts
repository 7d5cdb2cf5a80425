/**
 * The sandbox stops a hostile tool (issues 28 and 34, ADR 0032): every attempt succeeds in a
 * consumer without a sandbox and fails in one with it, for the reason the sandbox gives (the
 * errno, the proxy's 403), and the sandboxed consumer goes on serving. The consumer is a real
 * Node.js process using the built client (tests/fixtures/sandbox/consumer.mjs), with a planted
 * key in its HOME and secrets in its environment, run as root and as nobody (setpriv).
 */
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../support/processes.js';
import { type Answer, Consumer, type ConsumerUser, HostileScene, hostileSkipReason, KEY, SECRETS, toolException } from './hostile-support.js';

/** One attempt: the tool's input, what it gets with nothing in its way, and why it fails in the sandbox. */
interface Attempt {
  input: Record<string, unknown>;
  plain: unknown;
  /** The tool's error in the sandbox: its errno code (or error name), and a part of its message. */
  why: { type: string; message?: string | RegExp };
}

/** The attempts against `scene`, the consumer being `consumerPid`. */
const attempts = (scene: HostileScene, consumerPid: number): Record<string, Attempt> => ({
  'reads a planted key in ~/.ssh': { input: { attempt: 'read', path: join(scene.home, '.ssh', 'id_ed25519') }, plain: KEY, why: { type: 'ENOENT' } },
  'reads a file in another folder': { input: { attempt: 'read', path: join(scene.elsewhere, 'notes.txt') }, plain: 'another project', why: { type: 'ENOENT' } },
  'writes outside its workspace': { input: { attempt: 'write', path: join(scene.elsewhere, 'written.txt') }, plain: 'written', why: { type: 'ENOENT' } },
  "reads the consumer's secret from its own environment": {
    input: { attempt: 'own_env', name: 'CONSUMER_SECRET' },
    plain: SECRETS.CONSUMER_SECRET,
    why: { type: 'Error', message: 'CONSUMER_SECRET is not set' },
  },
  "reads the bridge's token (TWYLT_MCP_TOKEN) from its own environment": {
    input: { attempt: 'own_env', name: 'TWYLT_MCP_TOKEN' },
    plain: SECRETS.TWYLT_MCP_TOKEN,
    why: { type: 'Error', message: 'TWYLT_MCP_TOKEN is not set' },
  },
  'reads a TWYLT_* variable outside the protocol (TWYLT_SOMETHING) from its own environment': {
    input: { attempt: 'own_env', name: 'TWYLT_SOMETHING' },
    plain: SECRETS.TWYLT_SOMETHING,
    why: { type: 'Error', message: 'TWYLT_SOMETHING is not set' },
  },
  // Its own pid namespace: the consumer's pid is not there.
  "reads the consumer's environment through /proc": { input: { attempt: 'environ', pid: consumerPid }, plain: expect.stringContaining(SECRETS.CONSUMER_SECRET), why: { type: 'ENOENT' } },
  // Its own network namespace: nothing listens on its loopback.
  'opens a raw TCP connection to a loopback server': { input: { attempt: 'tcp', port: scene.tcpPort }, plain: 'hello from the loopback', why: { type: 'ECONNREFUSED' } },
  // Refused by the proxy itself (403), not by a relay that is not there.
  'sends a request to a host not allowed (through the proxy when there is one)': {
    input: { attempt: 'http', url: `http://127.0.0.1:${scene.webPort}/` },
    plain: 'served',
    why: { type: 'Error', message: /^HTTP 403/ },
  },
});

/** Expect a sandboxed call to have failed for `why`. */
function expectRefused(within: Answer, why: Attempt['why']): void {
  expect(within.ok, JSON.stringify(within)).toBe(false);
  const exception = toolException(within);
  expect(exception?.type, JSON.stringify(within)).toBe(why.type);
  if (typeof why.message === 'string') expect(exception!.message).toContain(why.message);
  else if (why.message) expect(exception!.message).toMatch(why.message);
}

const USERS: ConsumerUser[] = ['root', 'nobody'];

for (const user of USERS) {
  const skip = hostileSkipReason(user);
  describe.skipIf(skip !== undefined)(`a hostile tool, the consumer running as ${user}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let scene: HostileScene;
    let plain: Consumer;
    let boxed: Consumer;
    beforeAll(async () => {
      scene = await HostileScene.create(user);
      plain = new Consumer(scene, 'plain');
      // allowNet names a host, so the proxy runs and the request below is refused by it. As
      // nobody the processes limit is RLIMIT_NPROC, which counts every thread of the user (the
      // consumers' and the in-sandbox relay's too): room for those, and still under the bomb's 150.
      const processes = user === 'root' ? 64 : 128;
      boxed = new Consumer(scene, 'sandbox', { allowNet: ['example.invalid'], memoryMb: 128, processes, cpuSeconds: 1 });
    });
    afterAll(() => {
      plain?.stop();
      boxed?.stop();
      scene?.close();
    });

    it('both consumers start (the sandboxed one after checking that bwrap works)', async () => {
      expect((await plain.ready).ready, plain.stderr).toBe(plain.pid);
      expect((await boxed.ready).ready, boxed.stderr).toBe(boxed.pid);
    });

    const names = Object.keys(attempts({ home: '/', elsewhere: '/' } as HostileScene, 0));
    for (const name of names) {
      it(`${name}: succeeds without the sandbox, fails with it and says why, and the consumer serves on`, async () => {
        const without = attempts(scene, plain.pid)[name]!;
        const within = attempts(scene, boxed.pid)[name]!;
        const answer = await plain.call(without.input);
        expect(answer, JSON.stringify(answer)).toMatchObject({ ok: true, result: without.plain });
        expectRefused(await boxed.call(within.input), within.why);
        expect(await boxed.call({ attempt: 'ping' })).toMatchObject({ ok: true, result: 'pong' });
      }, 240_000);
    }

    it("the tool's whole environment holds none of the consumer's secrets, by name or by value", async () => {
      const without = await plain.call({ attempt: 'env' });
      expect(without, JSON.stringify(without)).toMatchObject({ ok: true, result: SECRETS });
      const within = await boxed.call({ attempt: 'env' });
      expect(within.ok, JSON.stringify(within)).toBe(true);
      const env = within.result as Record<string, string>;
      for (const [name, secret] of Object.entries(SECRETS)) {
        expect(Object.keys(env)).not.toContain(name);
        expect(Object.values(env).filter((value) => value.includes(secret))).toEqual([]);
      }
      expect(Object.keys(env).filter((name) => name.startsWith('TWYLT_'))).toEqual([]);
    });

    it('kills the consumer: it dies without the sandbox, and the sandboxed one serves on (ESRCH: not in its pid namespace)', async () => {
      const victim = new Consumer(scene, 'plain');
      await victim.ready;
      await victim.call({ attempt: 'kill', pid: victim.pid });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(isAlive(victim.pid)).toBe(false);
      expectRefused(await boxed.call({ attempt: 'kill', pid: boxed.pid }), { type: 'ESRCH' });
      expect(isAlive(boxed.pid)).toBe(true);
      expect(await boxed.call({ attempt: 'ping' })).toMatchObject({ ok: true, result: 'pong' });
    });

    it('leaves a grandchild in a session of its own that writes later: it writes without the sandbox, and never with it', async () => {
      const late = { plain: join(scene.workspace, 'late-plain.txt'), boxed: join(scene.workspace, 'late-boxed.txt') };
      expect(await plain.call({ attempt: 'linger', path: late.plain })).toMatchObject({ ok: true });
      expect(await boxed.call({ attempt: 'linger', path: late.boxed })).toMatchObject({ ok: true });
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(existsSync(late.plain)).toBe(true);
      expect(existsSync(late.boxed)).toBe(false);
    });

    it('carries a file in /tmp to the next call: found without the sandbox, gone with it (ENOENT: a private /tmp per call)', async () => {
      const name = `twylt-carry-${process.pid}-${user}`;
      try {
        expect(await plain.call({ attempt: 'tmp_put', name })).toMatchObject({ ok: true });
        expect(await plain.call({ attempt: 'tmp_get', name })).toMatchObject({ ok: true, result: 'carried' });
        expect(await boxed.call({ attempt: 'tmp_put', name: `${name}-boxed` })).toMatchObject({ ok: true });
        expectRefused(await boxed.call({ attempt: 'tmp_get', name: `${name}-boxed` }), { type: 'ENOENT' });
      } finally {
        rmSync(join(tmpdir(), name), { force: true });
      }
      expect(existsSync(join(tmpdir(), `${name}-boxed`))).toBe(false);
    });

    it('a fork bomb: 150 processes start without the sandbox; with it the processes limit stops it, a ResourceLimitError', async () => {
      const without = await plain.call({ attempt: 'fork_bomb', count: 150 });
      expect(without, JSON.stringify(without)).toMatchObject({ ok: true, result: '150 started' });
      expect(await boxed.call({ attempt: 'fork_bomb', count: 150 })).toMatchObject({ ok: false, error: 'ResourceLimitError', limit: 'processes' });
      expect(await boxed.call({ attempt: 'ping' })).toMatchObject({ ok: true, result: 'pong' });
    }, 240_000);

    it('a memory bomb: 400 MB are held without the sandbox; with it the memory limit stops it, a ResourceLimitError', async () => {
      const without = await plain.call({ attempt: 'memory_bomb', mb: 400 });
      expect(without, JSON.stringify(without)).toMatchObject({ ok: true, result: '400 MB held' });
      expect(await boxed.call({ attempt: 'memory_bomb', mb: 400 })).toMatchObject({ ok: false, error: 'ResourceLimitError', limit: 'memory' });
      expect(await boxed.call({ attempt: 'ping' })).toMatchObject({ ok: true, result: 'pong' });
    }, 240_000);

    it('a CPU burner: 2 s of CPU without the sandbox; with it the CPU-time limit stops it, a ResourceLimitError', async () => {
      const without = await plain.call({ attempt: 'cpu_burn', seconds: 2 });
      expect(without, JSON.stringify(without)).toMatchObject({ ok: true, result: 'burnt' });
      expect(await boxed.call({ attempt: 'cpu_burn', seconds: 2 })).toMatchObject({ ok: false, error: 'ResourceLimitError', limit: 'cpu_time' });
      expect(await boxed.call({ attempt: 'ping' })).toMatchObject({ ok: true, result: 'pong' });
    }, 240_000);
  });
}
