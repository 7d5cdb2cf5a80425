/**
 * `twylt check` runs the command as typed where the user stands (issue 12): each run gets a
 * fresh directory inside the user's directory, so `npx tsx tools/run.ts` finds the project's
 * own tsx, and a command that cannot start stops the check after one message.
 *
 * The project directory is a temporary folder outside the repository whose node_modules
 * holds tsx (and twylt, zod) as links into the repository. npm's global prefix and cache are
 * pointed at empty folders and npm is offline, so no global or cached tsx can answer for it:
 * the control run from the OS temp dir (`--tmp-root`) shows that npx then finds nothing.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConformanceReport } from '../../packages/twylt/src/conformance/index.js';
import { NO_PYTHON_REASON, fixtures as pythonFixtures, noPython, python } from '../support/python.js';
import { useTsProject } from '../support/ts-project.js';
import { checkReport, runTwylt, twyltBin } from '../support/twylt-cli.js';

/** npm may use neither a global tsx nor one from its cache, nor the registry. */
const { scratch, npm: NPM_ISOLATED, project } = useTsProject('twylt-check-command-');

const checkJson = (command: string[], cwd: string, extra: string[] = [], env: Record<string, string> = {}) => checkReport(command, extra, { cwd, env });

const failures = (report: ConformanceReport) => report.results.filter((r) => r.status === 'fail').map((r) => `${r.id}: ${r.message}`);
const leftovers = (dir: string) => readdirSync(dir).filter((name) => name.startsWith('.twylt-check-'));

describe('a command typed the natural way, in a project with tsx in its own node_modules', () => {
  it('twylt check -- npx tsx tools/run.ts passes, every run in a fresh directory inside the project', async () => {
    const { code, report } = await checkJson(['npx', 'tsx', 'tools/run.ts'], project, ['--timeout', '60000'], NPM_ISOLATED);
    expect(failures(report)).toEqual([]);
    expect(code).toBe(0);
    expect(report.tool).toEqual({ name: 'echo', version: '1.0.0' });
    expect(report.command).toEqual(['npx', 'tsx', join(project, 'tools/run.ts')]);
    expect(report.runDirectory.startsWith(join(project, '.twylt-check-'))).toBe(true);
    // The file-mode runs, too, happened there, in their own directory.
    const fileRun = report.results.find((r) => r.id === 'file.success')!;
    expect(fileRun.status).toBe('pass');
    expect(leftovers(project)).toEqual([]);
  }, 300_000);

  it('control: the same command run from the OS temp dir finds no tsx, and the check stops after one message, exit 1', async () => {
    const run = await runTwylt(['check', '--tmp-root', scratch, '--', 'npx', 'tsx', 'tools/run.ts'], { cwd: project, env: NPM_ISOLATED });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^twylt check: the command "npx tsx \S+\/tools\/run\.ts" did not start a TWYLT tool: it exited with code 1 \(and 1 for --version\) without a result or an error object; it said: ".*npm error/);
    expect(lines[0]).toContain(`(the runs were made in ${scratch}, outside ${project}: a command that finds its project from its working directory, such as npx or node --import, finds nothing there)`);
  }, 120_000);

  it('node --import tsx tools/run.ts resolves tsx from the project too', async () => {
    const { code, report } = await checkJson(['node', '--import', 'tsx', 'tools/run.ts'], project, ['--only', 'describe', '--only', 'file.success', '--timeout', '60000']);
    expect(failures(report)).toEqual([]);
    expect(report.results.find((r) => r.id === 'file.success')?.status).toBe('pass');
    expect(code).toBe(0);
  }, 300_000);
});

describe.skipIf(noPython)(`twylt check -- python3 <relative path> (${noPython ? NO_PYTHON_REASON : 'python3 found'})`, () => {
  it('passes on a conforming tool copied into a project folder, leaving nothing behind', async () => {
    const dir = join(scratch, 'py-project');
    mkdirSync(join(dir, 'tools'), { recursive: true });
    for (const file of ['shapes_tool.py', 'twylt_stdlib.py']) cpSync(join(pythonFixtures, file), join(dir, 'tools', file));
    const { code, report } = await checkJson([python!, 'tools/shapes_tool.py'], dir);
    expect(failures(report)).toEqual([]);
    expect(code).toBe(0);
    expect(report.summary.skip).toBe(0);
    expect(report.command[1]).toBe(join(dir, 'tools/shapes_tool.py'));
    expect(leftovers(dir)).toEqual([]);
  }, 120_000);
});

describe.skipIf(noPython)('interrupted', () => {
  it('Ctrl-C ends the runs in flight and removes the run directories: exit 130', async () => {
    const dir = mkdtempSync(join(scratch, 'interrupted-'));
    const child = spawn(process.execPath, [twyltBin, 'check', '--', python!, join(pythonFixtures, 'broken/hang.py')], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    // The few-shot runs hang in business code: wait (bounded) until they are under way.
    for (let i = 0; i < 100 && leftovers(dir).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(leftovers(dir)).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toBe('twylt check: interrupted\n');
    expect(leftovers(dir)).toEqual([]);
  }, 60_000);
});

describe('a command that cannot start: one message, exit 1', () => {
  it('a program not on PATH', async () => {
    const run = await runTwylt(['check', '--', 'twylt-no-such-program', 'tool.py'], { cwd: scratch });
    expect(run).toEqual({ code: 1, stdout: '', stderr: 'twylt check: the command cannot be started: cannot run twylt-no-such-program: spawn twylt-no-such-program ENOENT\n' });
  });

  it('a file that is not executable', async () => {
    const file = join(scratch, 'not-executable.sh');
    writeFileSync(file, 'echo hi\n', { mode: 0o644 });
    const run = await runTwylt(['check', '--', './not-executable.sh'], { cwd: scratch });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`twylt check: the command cannot be started: cannot run ${file}: spawn ${file} EACCES\n`);
  });

  it.skipIf(noPython)('an interpreter that exits before speaking TWYLT (python3 on a missing script): the JSON report holds the one failure and its two runs', async () => {
    const { code, report } = await checkJson([python!, 'missing.py'], scratch);
    expect(code).toBe(1);
    expect(report.results).toHaveLength(1);
    expect(report.startFailure).toMatch(/did not start a TWYLT tool: it exited with code 2 \(and 2 for --version\) .*can't open file/);
    expect(report.results[0]).toMatchObject({ id: 'json_spec', status: 'fail', message: report.startFailure });
    expect(report.results[0]!.evidence.map((run) => run.sent.args)).toEqual([['{"describe":"json_spec"}'], ['--version']]);
    expect(report.summary).toEqual({ pass: 0, fail: 1, warn: 0, skip: 0 });
    expect(existsSync(join(scratch, 'missing.py'))).toBe(false);
    expect(leftovers(scratch)).toEqual([]);
  });
});
