/**
 * `--sandbox` in the `twylt` command (issue 28): a well-behaved tool answers exactly as it
 * does unsandboxed; the examples, a git tool and a file tool pass `twylt check --sandbox` in
 * their workspace; `twylt scan --sandbox` describes sandboxed; a sandbox that cannot work
 * is a refusal to start, never an unsandboxed run.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleTool } from '../support/bundle-tool.js';
import { checkReport, repoRoot, runTwylt } from '../support/twylt-cli.js';
import { SANDBOX_SKIP_REASON } from './support.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-sandbox-cli-'));
const workspace = join(scratch, 'workspace');
const bundles = new Map<string, string>();
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const TOOLS = [
  ...readdirSync(join(repoRoot, 'examples'))
    .map((name) => join(repoRoot, 'examples', name, 'tool.ts'))
    .filter((file) => existsSync(file)),
  join(repoRoot, 'tests/fixtures/sandbox/git_tool.ts'),
  join(repoRoot, 'tests/fixtures/sandbox/file_tool.ts'),
];

describe.skipIf(SANDBOX_SKIP_REASON !== undefined)(`twylt --sandbox${SANDBOX_SKIP_REASON ? ` (skipped: ${SANDBOX_SKIP_REASON})` : ''}`, () => {
  beforeAll(async () => {
    mkdirSync(workspace);
    const built = join(scratch, 'built');
    mkdirSync(built);
    for (const tool of TOOLS) bundles.set(tool, await bundleTool(tool, built));
  });

  it('twylt call: the same output, exit code and error with and without --sandbox, on every transport', async () => {
    const echo = [process.execPath, bundles.get(join(repoRoot, 'examples/echo/tool.ts'))!];
    for (const transport of ['cli', 'stdin', 'file']) {
      for (const input of ['{"text": "hé"}', '{"text": 1}']) {
        const args = ['call', '--input', input, '--transport', transport, '--json', '--', ...echo];
        const plain = await runTwylt(args, { cwd: workspace });
        const boxed = await runTwylt(['call', '--sandbox', ...args.slice(1)], { cwd: workspace });
        expect(boxed, `${transport} ${input}`).toEqual(plain);
      }
    }
    expect(readdirSync(workspace)).toEqual([]);
  }, 240_000);

  it('the git tool runs git in its workspace under --sandbox: a repository made there is seen there', async () => {
    const repo = join(scratch, 'repo');
    mkdirSync(repo);
    const git = [process.execPath, bundles.get(join(repoRoot, 'tests/fixtures/sandbox/git_tool.ts'))!];
    const result = await runTwylt(['call', '--sandbox', '--json', '--input', '{"init": true}', '--', ...git], { cwd: repo });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ is_repo: true, branch: 'main' });
    expect(existsSync(join(repo, '.git', 'HEAD'))).toBe(true);
  }, 120_000);

  for (const tool of TOOLS) {
    const name = tool.slice(repoRoot.length);
    it(`twylt check --sandbox passes on ${name} in its workspace`, async () => {
      const { code, report, stderr } = await checkReport([process.execPath, bundles.get(tool)!], ['--sandbox', '--timeout', '60000', '--concurrency', '2'], { cwd: workspace });
      expect(report.results.filter((result) => result.status === 'fail').map((result) => `${result.id}: ${result.message}`), stderr).toEqual([]);
      expect(code).toBe(0);
    }, 600_000);
  }

  it('twylt scan --sandbox runs the describes in the sandbox: a tool that writes outside its folder when started does so only without it', async () => {
    const root = join(scratch, 'scanned');
    const folder = join(root, 'pack', 'echo');
    mkdirSync(folder, { recursive: true });
    const escaped = join(root, 'pack', 'escaped.txt');
    // The bundled echo tool, with a first line that writes next to its folder at start-up.
    const prelude = `import { writeFileSync as __escape } from 'node:fs'; try { __escape(${JSON.stringify(escaped)}, 'out'); } catch {}\n`;
    writeFileSync(join(folder, 'tool.mjs'), prelude + readFileSync(bundles.get(join(repoRoot, 'examples/echo/tool.ts'))!, 'utf8'));

    const boxed = await runTwylt(['scan', '--sandbox', '--json', root], { cwd: scratch });
    expect(JSON.parse(boxed.stdout).tools.map((tool: { name: string; status: string }) => [tool.name, tool.status]), boxed.stderr).toEqual([['echo', 'ok']]);
    expect(existsSync(escaped)).toBe(false);

    const plain = await runTwylt(['scan', '--json', root], { cwd: scratch });
    expect(JSON.parse(plain.stdout).tools.map((tool: { name: string; status: string }) => [tool.name, tool.status])).toEqual([['echo', 'ok']]);
    expect(existsSync(escaped)).toBe(true);
  }, 240_000);

  it('a sandbox that cannot work here is a refusal to start: exit 1, one line why, nothing run, no stack trace', async () => {
    const marker = join(workspace, 'ran.txt');
    const tool = [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`];
    for (const command of [['call', '--input', '{}'], ['check']]) {
      const result = await runTwylt([...command, '--sandbox', '--', ...tool], { cwd: workspace, env: { TWYLT_SANDBOX_BWRAP: join(scratch, 'no-such-bwrap') } });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^twylt (call|check): bubblewrap .* cannot make a sandbox here: .*refusing to run tools unsandboxed/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(marker)).toBe(false);
    }
  }, 120_000);

  it('a bad --sandbox-* value is a usage error (64)', async () => {
    const result = await runTwylt(['call', '--input', '{}', '--sandbox-memory', 'lots', '--', 'true'], { cwd: workspace });
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('--sandbox-memory takes a whole number');
  });
});
