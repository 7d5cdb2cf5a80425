/**
 * The README tested as written: its quick-start code is the example it names, its console
 * sessions print what it shows, and its command lists match what the commands print.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { noPython, NO_PYTHON_REASON } from '../support/python.js';
import { ROOT, run } from '../support/process.js';
import { blocksUnder, consoleSteps, fencedBlocks, readDoc, runSession, showsAs, type Block } from './markdown.js';

const README = readDoc('README.md');
const QUICK_START = 'Quick start: write a tool';
const twylt = [process.execPath, join(ROOT, 'packages/twylt/dist/cli/main.js')];
const twyltMcp = [process.execPath, join(ROOT, 'packages/twylt-mcp/dist/cli.js')];

describe('the quick start', () => {
  it('shows examples/echo/tool.ts byte for byte', () => {
    const [code] = blocksUnder(README, QUICK_START, 'ts');
    expect(code?.body).toBe(readFileSync(join(ROOT, 'examples/echo/tool.ts'), 'utf8'));
  });
});

/** The README's paths as shown, for the sandbox's: a clone in /home/me/twylt. */
const SHOWN_ROOT = '/home/me/twylt';
const scratch = mkdtempSync(join(tmpdir(), 'twylt-readme-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * A stand-in for the repository root, where the README's commands run: the built examples
 * and the fixtures (linked), an empty `work` folder, and `twylt` on the PATH.
 */
function sandbox(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(scratch, 'root-'));
  for (const name of ['build', 'tests']) symlinkSync(join(ROOT, name), join(dir, name));
  mkdirSync(join(dir, 'work'));
  const bin = join(dir, '.bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'twylt'), `#!/bin/sh\nexec ${twylt.map((part) => `'${part}'`).join(' ')} "$@"\n`, { mode: 0o755 });
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}`, NO_COLOR: '1' };
  for (const key of ['TWYLT_DEBUG', 'TWYLT_ERROR_FORMAT', 'INPUT_DESCRIBE', 'NODE_OPTIONS']) delete env[key];
  return { dir, env };
}

/** What differs from run to run: the root's path, check's random folder, durations. */
function normalizer(dir: string) {
  return (text: string) =>
    text
      .replaceAll(dir, SHOWN_ROOT)
      .replace(/\.twylt-check-[A-Za-z0-9]+/g, '.twylt-check-XXXXXX')
      .replace(/ in [\d.]+ s$/gm, ' in N s');
}

// The Install section's sessions need the installed packages: tests/docs/install.test.ts runs them.
const sessions = fencedBlocks(README).filter((block) => block.lang === 'console' && block.heading !== QUICK_START && block.heading !== 'Install');

describe('the README console sessions print what they show', () => {
  it('has sessions to run', () => expect(sessions.length).toBeGreaterThanOrEqual(5));
  for (const block of sessions) {
    const needsPython = block.body.includes('python3');
    const title = `line ${block.line} (${block.heading})${needsPython && noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`;
    it.skipIf(needsPython && noPython)(title, async () => {
      await expectSession(block);
    });
  }
});

async function expectSession(block: Block): Promise<void> {
  const { dir, env } = sandbox();
  const steps = consoleSteps(block);
  const outputs = await runSession(steps, { cwd: dir, env });
  expect(outputs).toHaveLength(steps.length);
  steps.forEach((step, i) => {
    const actual = outputs[i]!;
    if (!showsAs(step.shown, actual, normalizer(dir))) expect.fail(`$ ${step.command}\nthe README shows:\n${step.shown}\nit printed:\n${actual}`);
  });
}

/** The README's command list: `- \`twylt NAME ...` bullets, each with its continuation lines. */
function commandBullets(): Map<string, string> {
  const bullets = new Map<string, string>();
  const lines = README.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const head = /^- `twylt (\w+) /.exec(lines[i]!);
    if (!head) continue;
    let text = lines[i]!;
    while (i + 1 < lines.length && /^ {2}\S/.test(lines[i + 1]!)) text += `\n${lines[++i]}`;
    bullets.set(head[1]!, text);
  }
  return bullets;
}

/** The option names a `--help` text lists: `-x` and `--name` at the start of its indented lines. */
function helpOptions(help: string): string[] {
  const names = new Set<string>();
  for (const match of help.matchAll(/^ {2,}((?:-\w, )?--[a-z][\w-]*)/gm)) {
    for (const name of match[1]!.split(', ')) names.add(name);
  }
  return [...names];
}

function mentions(text: string, option: string): boolean {
  return new RegExp(`(?<![\\w-])${option}(?![\\w-])`).test(text);
}

/** The text of a markdown section (from its heading to the next heading of level 2 or 1). */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`no section "## ${heading}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end === -1 ? undefined : end);
}

describe('the twylt command, as documented', () => {
  it('--version, -V and -v print the package version and exit 0', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'packages/twylt/package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V', '-v']) {
      const result = await run([...twylt, flag]);
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }, flag).toEqual({ code: 0, stdout: `twylt ${version}\n`, stderr: '' });
    }
  });

  it('--help names every command, and the README documents exactly those', async () => {
    const help = await run([...twylt, '--help']);
    expect(help.code).toBe(0);
    const listed = [...help.stdout.split('\nCommands:\n')[1]!.split('\n\n')[0]!.matchAll(/^ {2}(\w+) /gm)].map((match) => match[1]);
    expect(listed).toContain('build');
    expect(help.stdout).toContain('--version');
    expect([...commandBullets().keys()].sort()).toEqual([...listed].sort());
    expect(README).toContain('`twylt <command> --help` (`-h`)');
    expect(README).toContain('`twylt --version` (`-V`, `-v`)');
  });

  for (const [name, bullet] of commandBullets()) {
    it(`the README lists every option of "twylt ${name} --help"`, async () => {
      const help = await run([...twylt, name, '--help']);
      expect(help.code).toBe(0);
      // -h/--help: every command has them, said once above the list (checked above).
      const options = helpOptions(help.stdout).filter((option) => option !== '-h' && option !== '--help');
      expect(options.length).toBeGreaterThan(0);
      expect(options.filter((option) => !mentions(bullet, option))).toEqual([]);
    });
  }

  it('the README’s twylt-mcp section mentions every option of "twylt-mcp --help"', async () => {
    const help = await run([...twyltMcp, '--help']);
    expect(help.code).toBe(0);
    const documented = section(README, 'MCP bridge: every TWYLT tool as an MCP tool');
    // Help and version flags: every command has them.
    const options = helpOptions(help.stdout).filter((option) => !['-h', '--help', '-V', '--version'].includes(option));
    expect(options).toContain('--log-input');
    expect(options.filter((option) => !mentions(documented, option))).toEqual([]);
    expect(documented).toContain('"maxOutputBytes"?');
    expect(documented).toContain('"transport"?');
  });

  it('docs/mcp.md lists every option of "twylt-mcp --help"', async () => {
    const help = await run([...twyltMcp, '--help']);
    expect(help.code).toBe(0);
    const mcp = readDoc('docs/mcp.md');
    const documented = section(mcp, 'Command line') + section(mcp, 'HTTP mode');
    const options = helpOptions(help.stdout);
    expect(options).toContain('--http');
    expect(options.filter((option) => !mentions(documented, `\`${option}`) && !mentions(documented, option))).toEqual([]);
  });
});
