/**
 * Issue 36, item 4: long steps are silent. On a terminal (stderr a TTY, here a real
 * pseudo-terminal, tests/support/pty.ts), `twylt check` shows which check ended and how
 * many of how many, `twylt scan --install` how many tools of how many and the install in
 * progress, `twylt build --executable` its steps, on one status line rewritten in place and
 * erased before the report. Nothing of it when stderr is not a terminal, nor with --json.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lazyPack } from '../catalog/lazy-npm.js';
import { scratch } from '../catalog/support.js';
import { ROOT } from '../support/process.js';
import { NO_PYTHON_REASON, noPython, python } from '../support/python.js';
import { onTerminal } from '../support/pty.js';
import { runTwylt, twyltBin } from '../support/twylt-cli.js';

const dir = scratch('progress');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ECHO = join(ROOT, 'tests/fixtures/python/echo_tool.py');
/** A terminal as a person has one: TERM set, colours allowed. */
const TERMINAL = { ...process.env, TERM: 'xterm-256color', NO_COLOR: '' };
const SLOW = 180_000;
const twylt = (args: string[]) => [process.execPath, twyltBin, ...args];

/** The status lines shown, in order: each is written after "\r\x1b[K" (erase the line). */
function statusLines(terminal: string, command: string): string[] {
  return terminal
    .split('\r\x1b[K')
    .map((part) => part.split('\r')[0]!)
    .filter((part) => part.startsWith(`twylt ${command}: `));
}

describe.skipIf(noPython)(`twylt check${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  it(
    'on a terminal: which check ended, n of m, then the line erased before the table',
    async () => {
      const run = await onTerminal(python!, twylt(['check', '--only', 'describe', '--', python!, ECHO]), { env: TERMINAL });
      expect(run.code, run.terminal).toBe(0);
      const lines = statusLines(run.terminal, 'check');
      expect(lines[0]).toBe('twylt check: json_spec (starting the tool)');
      expect(lines[1]).toMatch(/^twylt check: 1 of (\d+) checks done \(json_spec\)$/);
      const total = Number(/of (\d+)/.exec(lines[1]!)![1]);
      expect(total).toBeGreaterThan(5);
      expect(lines.at(-1)).toMatch(new RegExp(`^twylt check: ${total} of ${total} checks done \\(describe\\.[\\w.]+\\)$`));
      expect(lines).toHaveLength(total + 1);
      // The status line is erased, then the table follows on the terminal (stdout is a pipe here).
      expect(run.terminal.endsWith('\r\x1b[K')).toBe(true);
      expect(run.stdout).toMatch(/^twylt check: py_echo 1\.2\.0/);
    },
    SLOW,
  );

  it(
    'with --json on a terminal, and with stderr not a terminal: nothing on stderr',
    async () => {
      const json = await onTerminal(python!, twylt(['check', '--json', '--only', 'describe', '--', python!, ECHO]), { env: TERMINAL });
      expect(json.code).toBe(0);
      expect(json.terminal).toBe('');
      expect(JSON.parse(json.stdout).ok).toBe(true);
      const piped = await runTwylt(['check', '--only', 'describe', '--', python!, ECHO], { env: { TERM: 'xterm-256color' } });
      expect(piped.code).toBe(0);
      expect(piped.stderr).toBe('');
    },
    SLOW,
  );
});

describe('twylt scan --install', () => {
  it(
    'on a terminal: n of m tools, the install named; with --json or no terminal, nothing on stderr',
    async () => {
      const { pack } = lazyPack(dir, 'lazy');
      const env = { ...TERMINAL, npm_config_offline: 'true', TWYLT_WORKSPACES_DIR: join(dir, 'workspaces') };
      const run = await onTerminal(python!, twylt(['scan', pack, '--install', '--envs', join(dir, 'envs')]), { env });
      expect(run.code, run.terminal).toBe(0);
      const tool = join(pack, 'tools', 'pad', 'tool.ts');
      expect(statusLines(run.terminal, 'scan')).toEqual([
        'twylt scan: finding tools',
        'twylt scan: 0 of 1 tools done',
        `twylt scan: 0 of 1 tools done; installing npm requirements for ${tool}`,
        `twylt scan: 1 of 1 tools done (${tool})`,
      ]);
      expect(run.terminal.endsWith('\r\x1b[K')).toBe(true);
      expect(run.stdout).toMatch(/^NAME +VERSION/);

      const again = { ...env, TWYLT_ENVS_DIR: join(dir, 'envs-json') };
      const json = await onTerminal(python!, twylt(['scan', pack, '--install', '--json']), { env: again });
      expect(json.code, json.stdout).toBe(0);
      expect(json.terminal).toBe('');
      const piped = await runTwylt(['scan', pack, '--install', '--envs', join(dir, 'envs-piped')], { env: { npm_config_offline: 'true', TWYLT_WORKSPACES_DIR: join(dir, 'workspaces') } });
      expect(piped.code, piped.stderr).toBe(0);
      expect(piped.stderr).toBe('');
    },
    SLOW,
  );
});

describe('twylt build --executable', () => {
  it(
    'on a terminal: each step, then only the line that says what was written',
    async () => {
      const out = join(dir, 'echo');
      const run = await onTerminal(python ?? 'python3', twylt(['build', join(ROOT, 'examples/echo/tool.ts'), '--executable', '-o', out]), { env: TERMINAL, timeoutMs: SLOW });
      expect(run.code, run.terminal).toBe(0);
      expect(statusLines(run.terminal, 'build').filter((line) => !line.startsWith('twylt build: wrote'))).toEqual([
        'twylt build: bundling the tool to ask its describe',
        'twylt build: asking the tool its describe',
        'twylt build: bundling the tool',
        'twylt build: building the startup snapshot',
        `twylt build: injecting the snapshot into a copy of ${process.execPath}`,
        'twylt build: checking that the executable describes the tool',
      ]);
      expect(run.terminal).toMatch(/\r\x1b\[Ktwylt build: wrote .*echo \(\d+\.\d MiB executable, [\d.]+ s, echo 1\.0\.0\)\r\n$/);
    },
    SLOW,
  );
});
