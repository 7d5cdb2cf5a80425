/**
 * A hostile tool against the sandbox driver itself (issue 34, ADR 0032): the environment of
 * every process it can see, the capabilities it keeps, remounts, nested user namespaces, its
 * cgroup, the size of /tmp, /etc/npmrc; and allowed hosts reached from the runtimes people
 * write tools in. Each row runs as root and as an unprivileged user (setpriv), the consumer a real Node.js
 * process on the built client (tests/fixtures/sandbox/driver-consumer.mjs); each asserts why
 * an attempt fails (the errno), not only that it did. The unprivileged user runs a world-readable
 * copy of the built packages and the fixtures, never the checkout (tests/support/unprivileged.ts).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { python as PYENV_PYTHON } from '../support/python.js';
import { runtimeBinary } from '../support/runtimes.js';
import { asUser, UNPRIVILEGED_SKIP_REASON, type UnprivilegedCopy, unprivilegedCopy } from '../support/unprivileged.js';
import { LineConsumer } from './hostile-support.js';
import { SANDBOX_SKIP_REASON } from './support.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/sandbox/', import.meta.url));
/** The consumer's secrets: none may be seen inside. */
const SECRETS = { AWS_SECRET_ACCESS_KEY: 'aws-planted-secret-34', TWYLT_MCP_TOKEN: 'bridge-planted-token-34' };
const NPMRC_TOKEN = '//registry.npmjs.org/:_authToken=npm-planted-token-34';
/** The system's Python: the unprivileged user can run it too (pyenv's lives under /root). */
const SYSTEM_PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : undefined;
const NO_PYTHON = 'no /usr/bin/python3 here: the ctypes attempts (mount, unshare) need it';
/**
 * An unprivileged user of its own, not nobody nor NAMELESS_USER: RLIMIT_NPROC counts every
 * process of a user, and the hostile suite's consumers (nobody) and tests/sandbox/fallback.test.ts
 * (NAMELESS_USER, limited to 64) run beside this file.
 */
const DRIVER_USER = 60034;
const AS_USER = asUser(DRIVER_USER);
/** The consumer where it cannot make a cgroup (root): limits are rlimits. */
const WITHOUT_CGROUPS = ['bwrap', '--dev-bind', '/', '/', '--ro-bind', '/sys/fs/cgroup', '/sys/fs/cgroup', '--die-with-parent', '--'];
const CA = '-----BEGIN CERTIFICATE----- planted private CA';

/** Where one user's consumers run: the fixtures they run and the folders they are given. */
interface Place {
  /** tests/fixtures/sandbox/, in the checkout (root) or in the user's copy. */
  readonly fixtures: string;
  readonly consumer: string;
  readonly tool: readonly string[];
  /** The consumers' working directory, which holds the rest. */
  readonly scratch: string;
  readonly home: string;
  readonly workspace: string;
  readonly pylib: string;
  readonly nodelib: string;
  readonly caFile: string;
  /** An /etc/npmrc with a registry token, planted over the host's own. */
  readonly planted: string;
}

/** The folders and files of a place in `scratch`, readable by the unprivileged user, the workspace writable. */
function furnish(fixtures: string, scratch: string): Place {
  const place: Place = {
    fixtures,
    consumer: join(fixtures, 'driver-consumer.mjs'),
    tool: [process.execPath, join(fixtures, 'hostile-driver.mjs')],
    scratch,
    home: join(scratch, 'home'),
    workspace: join(scratch, 'workspace'),
    pylib: join(scratch, 'pylib'),
    nodelib: join(scratch, 'nodelib'),
    caFile: join(scratch, 'private-ca.pem'),
    planted: join(scratch, 'npmrc'),
  };
  chmodSync(scratch, 0o755);
  mkdirSync(place.home);
  mkdirSync(place.workspace);
  chmodSync(place.workspace, 0o777);
  mkdirSync(place.pylib);
  writeFileSync(join(place.pylib, 'twylt_planted_module.py'), 'VALUE = "imported from PYTHONPATH"\n');
  mkdirSync(join(place.nodelib, 'twylt-planted'), { recursive: true });
  writeFileSync(join(place.nodelib, 'twylt-planted', 'index.js'), 'exports.value = "required through NODE_PATH";\n');
  writeFileSync(place.caFile, CA);
  writeFileSync(place.planted, `${NPMRC_TOKEN}\n`);
  // Whatever the umask.
  for (const file of [join(place.pylib, 'twylt_planted_module.py'), join(place.nodelib, 'twylt-planted', 'index.js'), place.caFile, place.planted]) chmodSync(file, 0o644);
  for (const folder of [place.home, place.pylib, place.nodelib, join(place.nodelib, 'twylt-planted')]) chmodSync(folder, 0o755);
  return place;
}

let web: Server;
let webPort = 0;

function userReason(): string | undefined {
  if (SANDBOX_SKIP_REASON) return SANDBOX_SKIP_REASON;
  if (UNPRIVILEGED_SKIP_REASON) return UNPRIVILEGED_SKIP_REASON;
  const probe = spawnSync(AS_USER[0]!, [...AS_USER.slice(1), 'bwrap', '--ro-bind', '/', '/', '--unshare-all', '--', 'true']);
  if (probe.error) return `setpriv (util-linux) cannot run: ${probe.error.message}`;
  if (probe.status !== 0) return `bubblewrap cannot make a sandbox as uid ${DRIVER_USER} here: ${probe.stderr.toString().trim()}`;
  return undefined;
}

/** Each user the consumer runs as: the wrapper in front of it, or why not. */
const USERS = {
  root: { wrapper: [] as string[], skip: SANDBOX_SKIP_REASON ?? (process.getuid?.() !== 0 ? 'this is not root' : undefined) },
  [`an unprivileged user (uid ${DRIVER_USER})`]: { wrapper: AS_USER, skip: userReason() },
};

beforeAll(async () => {
  // curl prints what it gets: a TWYLT output for it.
  web = createServer((req, res) => res.end(req.url === '/curl' ? JSON.stringify({ result: 'served to curl' }) : 'served'));
  webPort = await new Promise((resolve) => web.listen(0, '127.0.0.1', () => resolve((web.address() as { port: number }).port)));
});

afterAll(() => {
  web?.close();
});

interface Answer {
  ready?: number;
  limits?: string;
  ok?: boolean;
  result?: unknown;
  error?: string;
  limit?: string;
  message?: string;
  stderr?: string;
  warm?: boolean;
}

interface ConsumerOptions {
  place: Place;
  policy?: object;
  command?: readonly string[];
  warm?: boolean;
  transport?: string;
  /** Added to the consumer's environment. */
  env?: Record<string, string>;
  /** In front of the consumer (setpriv, bwrap...), outermost first. */
  wrapper?: readonly string[];
}

/** A consumer process (driver-consumer.mjs), and a way to make calls through it. */
class Consumer extends LineConsumer<Answer> {
  constructor(options: ConsumerOptions) {
    const { place } = options;
    const config = { policy: options.policy ?? {}, workspace: place.workspace, command: options.command ?? place.tool, warm: options.warm ?? false, transport: options.transport };
    const command = [...(options.wrapper ?? []), process.execPath, place.consumer, JSON.stringify(config)];
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !/^(TWYLT_|TOOLSPEC_|NODE_OPTIONS$)/.test(name)) env[name] = value;
    super(command, { cwd: place.scratch, env: { ...env, ...SECRETS, HOME: place.home, ...options.env } });
  }
}

/** Start a consumer, make `calls`, stop it: the answers. */
async function withConsumer(options: ConsumerOptions, calls: Record<string, unknown>[]): Promise<Answer[]> {
  const consumer = new Consumer(options);
  try {
    const ready = await consumer.ready;
    // The consumer's own pid: the wrapper's when it ends in setpriv (which execs), not under bwrap.
    expect(ready.ready, consumer.stderr).toEqual(expect.any(Number));
    const answers: Answer[] = [];
    for (const input of calls) answers.push(await consumer.call(input));
    return answers;
  } finally {
    consumer.stop();
  }
}

/** A call that must have succeeded: its result. */
function resultOf(answer: Answer): unknown {
  expect(answer.ok, JSON.stringify(answer)).toBe(true);
  return answer.result;
}

for (const [user, { wrapper, skip }] of Object.entries(USERS)) {
  describe.skipIf(skip !== undefined)(`the consumer as ${user}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let place: Place;
    let copy: UnprivilegedCopy | undefined;
    beforeAll(() => {
      if (user === 'root') place = furnish(FIXTURES, mkdtempSync(join(tmpdir(), 'twylt-sandbox-driver-')));
      else {
        copy = unprivilegedCopy(['tests/fixtures/sandbox']);
        place = furnish(copy.path('tests/fixtures/sandbox'), copy.scratch('driver'));
      }
    });
    afterAll(() => {
      if (copy) copy.remove();
      else if (place) rmSync(place.scratch, { recursive: true, force: true });
    });
    describe('nothing the sandbox starts inside carries more than the tool gets (issue 34 item 0)', () => {
      for (const allowNet of [[], ['127.0.0.1:9']]) {
        for (const warm of [false, true]) {
          it(`${allowNet.length > 0 ? 'with an allowed host (a relay)' : 'offline'}, ${warm ? 'warm' : 'cold'}: every /proc/*/environ inside is a part of the tool's own`, async () => {
            const [answer] = await withConsumer({ place, wrapper, policy: { allowNet }, warm }, [{ attempt: 'environ' }]);
            expect(answer!.warm ?? false, 'served by a warm process').toBe(warm);
            const { self, seen } = resultOf(answer!) as { self: string; seen: Record<string, string[] | string> };
            const own = new Set(seen[self] as string[]);
            expect(Object.keys(seen).length, 'bwrap, the tool (and the relay)').toBeGreaterThanOrEqual(allowNet.length > 0 ? 3 : 2);
            for (const [pid, entries] of Object.entries(seen)) {
              expect(Array.isArray(entries), `/proc/${pid}/environ: ${String(entries)}`).toBe(true);
              const text = (entries as string[]).join('\n');
              for (const secret of Object.values(SECRETS)) expect(text, `/proc/${pid}/environ`).not.toContain(secret);
              expect((entries as string[]).filter((entry) => !own.has(entry)), `/proc/${pid}/environ beyond the tool's own`).toEqual([]);
            }
          }, 60_000);
        }
      }
    });

    describe.skipIf(SYSTEM_PYTHON === undefined)(`no capability, no remount, no nested user namespace, its own cgroup (item 1)${SYSTEM_PYTHON ? '' : ` (skipped: ${NO_PYTHON})`}`, () => {
      let answers: Answer[];
      beforeAll(async () => {
        answers = await withConsumer({ place, wrapper, policy: { memoryMb: 256 } }, [
          { attempt: 'status' },
          { attempt: 'remount', path: place.fixtures, python: SYSTEM_PYTHON },
          { attempt: 'remount', path: '/usr', python: SYSTEM_PYTHON },
          { attempt: 'unshare_user', python: SYSTEM_PYTHON },
          { attempt: 'write', path: '/usr/twylt-hostile' },
          { attempt: 'write', path: '/etc/passwd' },
          { attempt: 'own_code' },
          { attempt: 'cgroup' },
          { attempt: 'escape_and_hog', mb: 600, python: SYSTEM_PYTHON },
        ]);
      }, 120_000);

      it('CapEff and CapPrm inside are 0, and no new privileges', () => {
        expect(resultOf(answers[0]!)).toEqual({ CapEff: '0000000000000000', CapPrm: '0000000000000000', NoNewPrivs: '1' });
      });
      it("remounting its own code's read-only bind read-write fails: EPERM", () => {
        expect(resultOf(answers[1]!)).toBe('remount EPERM');
      });
      it('remounting /usr read-write fails: EPERM', () => {
        expect(resultOf(answers[2]!)).toBe('remount EPERM');
      });
      it('unshare(CLONE_NEWUSER) fails: ENOSPC (user.max_user_namespaces is 0 inside)', () => {
        expect(resultOf(answers[3]!)).toBe('unshare ENOSPC');
      });
      it('writing /usr, /etc/passwd and its own code fails: EROFS', () => {
        expect([answers[4], answers[5], answers[6]].map((answer) => resultOf(answer!))).toEqual(['EROFS', 'EROFS', 'EROFS']);
      });
      it("its cgroup namespace is rooted at the call's cgroup: every hierarchy shows /", () => {
        const lines = String(resultOf(answers[7]!)).trim().split('\n');
        expect(lines.filter((line) => !line.endsWith(':/')), 'cgroups outside the namespace root').toEqual([]);
      });
      it('mounting the memory hierarchy fails (EPERM), and the hog is stopped by --sandbox-memory', () => {
        const hog = answers[8]!;
        expect(hog.ok, JSON.stringify(hog)).toBe(false);
        expect(hog.stderr).toContain('mount EPERM');
        expect(hog.stderr).not.toContain('escaped');
        expect(hog.limit).toBe('memory');
      });
    });

    it.skipIf(user !== 'root')(`the start-up probe refuses a bwrap that leaves the tool capabilities (item 1)${user !== 'root' ? ' (skipped: bwrap run by another user drops them itself)' : ''}`, async () => {
      // A bwrap that ignores --cap-drop ALL, as bwrap run by root did without it.
      const careless = join(place.scratch, 'careless-bwrap.cjs');
      const script = [
        `#!${process.execPath}`,
        "const { spawnSync } = require('node:child_process');",
        "const { readFileSync } = require('node:fs');",
        'const args = process.argv.slice(2);',
        // Its options inline: those it was given on fd 3 (--args), once the consumer wrote them.
        "const from = args.indexOf('--args');",
        "if (from !== -1) args.splice(from, 2, ...readFileSync(3, 'latin1').split('\\0').slice(0, -1));",
        "const drop = args.indexOf('--cap-drop');",
        'if (drop !== -1) args.splice(drop, 2);',
        "process.exit(spawnSync('/usr/bin/bwrap', args, { stdio: 'inherit' }).status ?? 1);",
      ];
      writeFileSync(careless, `${script.join('\n')}\n`);
      chmodSync(careless, 0o755);
      const consumer = new Consumer({ place, wrapper, env: { TWYLT_SANDBOX_BWRAP: careless } });
      // No calls: a consumer that started ends at once.
      consumer.child.stdin.end();
      const code = await new Promise((resolve) => consumer.child.once('exit', resolve));
      expect(code, consumer.stderr).toBe(1);
      expect(consumer.stderr).toMatch(/SandboxUnavailableError: bubblewrap \(.*careless-bwrap\.cjs\) leaves the tool capabilities here \(CapEff 0*[1-9a-f][0-9a-f]*, expected 0\); refusing to run tools unsandboxed/);
    }, 60_000);

    describe('the private /tmp has a size: half the memory limit (item 7)', () => {
      const modes = user === 'root' ? { cgroup: [] as string[], rlimit: WITHOUT_CGROUPS } : { rlimit: [] as string[] };
      for (const [mode, inner] of Object.entries(modes)) {
        it(`${mode} limits: writing /tmp past 128 MiB under --sandbox-memory 256 fails with ENOSPC`, async () => {
          // As root without a cgroup, a processes limit is a refusal to start: none here.
          const consumer = new Consumer({ place, wrapper: [...inner, ...wrapper], policy: { memoryMb: 256, processes: 0 } });
          try {
            expect((await consumer.ready).limits, consumer.stderr).toBe(mode);
            expect(resultOf(await consumer.call({ attempt: 'fill_tmp', mb: 400 }))).toEqual({ written: 128, code: 'ENOSPC' });
          } finally {
            consumer.stop();
          }
        }, 60_000);
      }
    });

    it('/etc/npmrc (registry tokens) is not in the sandbox: ENOENT (item 8)', async () => {
      // Planted over the host's own, in a mount namespace of the consumer's.
      const over = ['bwrap', '--dev-bind', '/', '/', '--ro-bind', place.planted, '/etc/npmrc', '--die-with-parent', '--'];
      const outside = spawnSync(over[0]!, [...over.slice(1), ...wrapper, 'cat', '/etc/npmrc'], { encoding: 'utf8' });
      expect(outside.stdout, 'the consumer reads the planted file').toContain(NPMRC_TOKEN);
      const [inside] = await withConsumer({ place, wrapper: [...over, ...wrapper] }, [{ attempt: 'read', path: '/etc/npmrc' }]);
      expect(resultOf(inside!)).toBe('ENOENT');
    }, 60_000);

    it.skipIf(SYSTEM_PYTHON === undefined)(`a Python tool run with PYTHONPATH imports from it (item 10)${SYSTEM_PYTHON ? '' : ' (skipped: no /usr/bin/python3)'}`, async () => {
      const [answer] = await withConsumer({ place, wrapper, command: [SYSTEM_PYTHON!, join(place.fixtures, 'pythonpath_tool.py')], env: { PYTHONPATH: place.pylib } }, [{}]);
      expect(resultOf(answer!)).toBe('imported from PYTHONPATH');
    }, 60_000);

    it('a Node.js tool run with NODE_PATH requires from it (item 10)', async () => {
      const [answer] = await withConsumer({ place, wrapper, env: { NODE_PATH: place.nodelib } }, [{ attempt: 'require_module', name: 'twylt-planted' }]);
      expect(resultOf(answer!)).toBe('required through NODE_PATH');
    }, 60_000);

    it("a tool allowed a host gets the consumer's CA bundle variables with their files readable; an offline one does not (item 9)", async () => {
      const { caFile } = place;
      const calls = [
        { attempt: 'env', name: 'NODE_EXTRA_CA_CERTS' },
        { attempt: 'read', path: caFile },
        { attempt: 'env', name: 'NODE_USE_ENV_PROXY' },
      ];
      const env = { NODE_EXTRA_CA_CERTS: caFile, SSL_CERT_FILE: caFile };
      const online = await withConsumer({ place, wrapper, env, policy: { allowNet: ['127.0.0.1:9'] } }, calls);
      expect(online.map(resultOf)).toEqual([caFile, CA, '1']);
      const offline = await withConsumer({ place, wrapper, env }, calls);
      expect(offline.map(resultOf)).toEqual([null, 'ENOENT', null]);
    }, 60_000);

    describe('an allowed host (127.0.0.1 by exact address) works from the runtimes tools are written in (item 9)', () => {
      // The fixtures each client runs, in the place's fixtures.
      const fetchTool = 'fetch-env.mjs';
      const pyFetch = 'fetch_env.py';
      const node24 = runtimeBinary('node24');
      const bun = runtimeBinary('bun');
      const deno = runtimeBinary('deno');
      const underRoot = (binary: string | undefined) => binary !== undefined && user !== 'root' && realpathSync(binary).startsWith('/root/');
      const clients: Record<string, { command?: string[]; via: string; skip?: string; transport?: string }> = {
        'Node 24 fetch': { command: node24 ? [node24, fetchTool] : undefined, via: 'fetch', skip: node24 ? undefined : 'runtime node24 not installed (node scripts/runtimes.mjs install node24)' },
        'Node 24 node:http': { command: node24 ? [node24, fetchTool] : undefined, via: 'http', skip: node24 ? undefined : 'runtime node24 not installed' },
        'Bun fetch': { command: bun ? [bun, fetchTool] : undefined, via: 'fetch', skip: bun ? undefined : 'runtime bun not installed' },
        'Deno fetch': { command: deno ? [deno, 'run', '-A', fetchTool] : undefined, via: 'fetch', skip: deno ? undefined : 'runtime deno not installed' },
        'Python urllib': { command: SYSTEM_PYTHON ? [SYSTEM_PYTHON, pyFetch] : undefined, via: 'urllib', skip: SYSTEM_PYTHON ? undefined : 'no /usr/bin/python3' },
        'Python requests': { command: PYENV_PYTHON ? [PYENV_PYTHON, pyFetch] : undefined, via: 'requests', skip: requestsMissing() },
        'Node 20 fetch, which ignores the proxy variables: refused, as docs/sandbox.md says': { command: process.version.startsWith('v20.') ? [process.execPath, fetchTool] : undefined, via: 'fetch', skip: process.version.startsWith('v20.') ? undefined : `the tests run on Node ${process.version}, not 20` },
        curl: { command: existsSync('/usr/bin/curl') ? ['/usr/bin/curl', '-sS', '--fail-with-body'] : undefined, via: 'curl', transport: 'stdin', skip: existsSync('/usr/bin/curl') ? undefined : 'no /usr/bin/curl' },
      };
      for (const [name, client] of Object.entries(clients)) {
        const binary = client.command?.[0];
        const why = client.skip ?? (underRoot(binary) ? `${binary} is under /root (0700): uid ${DRIVER_USER} cannot run it` : undefined);
        it.skipIf(why !== undefined)(`${name}${why ? ` (skipped: ${why})` : ''}`, async () => {
          const url = `http://127.0.0.1:${webPort}/${client.via === 'curl' ? 'curl' : ''}`;
          const inPlace = client.command!.map((arg) => (arg === fetchTool || arg === pyFetch ? join(place.fixtures, arg) : arg));
          const command = client.via === 'curl' ? [...inPlace, url] : inPlace;
          const [answer] = await withConsumer({ place, wrapper, command, policy: { allowNet: [`127.0.0.1:${webPort}`] }, transport: client.transport }, [{ via: client.via, url }]);
          if (name.startsWith('Node 20')) {
            // Straight to 127.0.0.1 in the sandbox's own network namespace: nothing listens there.
            expect(answer!.ok, JSON.stringify(answer)).toBe(false);
            expect(answer!.stderr).toContain('ECONNREFUSED');
          } else expect(resultOf(answer!)).toBe(client.via === 'curl' ? 'served to curl' : '200 served');
        }, 60_000);
      }
    });
  });
}

function requestsMissing(): string | undefined {
  if (!PYENV_PYTHON) return 'python3 is not installed';
  return spawnSync(PYENV_PYTHON, ['-c', 'import requests']).status === 0 ? undefined : `${PYENV_PYTHON} has no requests module`;
}
