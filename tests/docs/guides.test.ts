/**
 * docs/testing-tools.md, docs/distributing.md and docs/python-tools.md (and hub.md's
 * Inspector command), tested as written: their files are
 * written into a project, their commands run there and print what the pages show. The
 * project stands for one with twylt installed: its node_modules links this repository's.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startBridge } from '../support/mcp.js';
import { ROOT, run } from '../support/process.js';
import { NO_PYTHON_REASON, noPython, python } from '../support/python.js';
import { RUNTIME_NAMES, TS_RUNTIME, runtimeArgv, runtimeBinary, runtimeMissing } from '../support/runtimes.js';
import { blocksUnder, consoleSteps, fencedBlocks, fileName, readDoc, runSession, showsAs, type Block } from './markdown.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-guides-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const hasNpm = (() => {
  try {
    execFileSync('npm', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** A project folder named `echo` whose node_modules are this repository's, `twylt` bin included. */
function project(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = join(mkdtempSync(join(scratch, 'p-')), 'echo');
  const modules = join(dir, 'node_modules');
  const bin = join(modules, '.bin');
  mkdirSync(bin, { recursive: true });
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (name !== '.bin' && !name.startsWith('.')) symlinkSync(join(ROOT, 'node_modules', name), join(modules, name));
  }
  // twylt's own bin is written below as a wrapper: linking it first would make that write go
  // through the link into the repository's dist/cli/main.js.
  for (const name of readdirSync(join(ROOT, 'node_modules/.bin'))) {
    if (name !== 'twylt') symlinkSync(realpathSync(join(ROOT, 'node_modules/.bin', name)), join(bin, name));
  }
  writeFileSync(join(bin, 'twylt'), `#!/bin/sh\nexec '${process.execPath}' '${join(ROOT, 'packages/twylt/dist/cli/main.js')}' "$@"\n`, { mode: 0o755 });
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', NO_COLOR: '1' };
  for (const key of Object.keys(env)) if (/^(VITEST|TWYLT_|INPUT_DESCRIBE$|NODE_OPTIONS$)/.test(key)) delete env[key];
  return { dir, env };
}

/** Whether the python3 of the tests imports `module`. */
function pythonImports(module: string): boolean {
  try {
    execFileSync(python!, ['-c', `import ${module}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function writeFiles(dir: string, blocks: Block[]): string[] {
  const names: string[] = [];
  for (const block of blocks) {
    const name = fileName(block);
    if (!name) continue;
    writeFileSync(join(dir, name), block.body);
    names.push(name);
  }
  return names;
}

/** What differs from run to run: a built file's size. */
const normalize = (text: string) => text.replace(/\(\d+ KiB, /g, '(N KiB, ');

/** Runs every command block of a page in order: console blocks must print what they show, sh blocks must succeed. */
async function runCommands(blocks: Block[], dir: string, env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<string[]> {
  const printed: string[] = [];
  for (const block of blocks) {
    if (block.lang === 'console') {
      const steps = consoleSteps(block);
      const outputs = await runSession(steps, { cwd: dir, env, timeoutMs });
      steps.forEach((step, i) => {
        if (!showsAs(step.shown, outputs[i]!, normalize)) expect.fail(`line ${block.line}: $ ${step.command}\nthe page shows:\n${step.shown}\nit printed:\n${outputs[i]}`);
      });
    } else if (block.lang === 'sh') {
      const [output] = await runSession([{ command: `${block.body}echo "exit $?"`, shown: '' }], { cwd: dir, env, timeoutMs });
      expect(output, `line ${block.line}`).toMatch(/exit 0\n$/);
      printed.push(output!);
    }
  }
  return printed;
}

const INSPECTOR = 'Through the MCP Inspector';
const testingPage = fencedBlocks(readDoc('docs/testing-tools.md'));
/** The page but its Inspector section, which needs Node 22.19 and the Inspector (its own test below). */
const testing = testingPage.filter((block) => block.heading !== INSPECTOR);
const distributing = fencedBlocks(readDoc('docs/distributing.md'));

describe('docs/testing-tools.md, as written', () => {
  it('its files, its tests (runWith and the client) and its commands', async () => {
    const { dir, env } = project();
    // The page's assumption: an ES module project (the README's Install section).
    writeFileSync(join(dir, 'package.json'), '{ "name": "echo", "private": true, "type": "module" }\n');
    expect(writeFiles(dir, testing)).toEqual(['echo.ts', 'main.ts', 'echo.test.ts', 'main.test.ts']);
    const [vitest] = await runCommands(testing, dir, env);
    // Every test of the page ran and passed: none was skipped or left out.
    const count = testing.filter((block) => block.lang === 'ts').reduce((sum, block) => sum + (block.body.match(/^\s*it\(/gm) ?? []).length, 0);
    expect(vitest).toMatch(new RegExp(`Tests\\s+${count} passed \\(${count}\\)`));
  }, 180_000);
});

describe("docs/testing-tools.md's two files on every runtime, from source", () => {
  for (const runtime of RUNTIME_NAMES) {
    const missing = runtimeBinary(runtime) === undefined ? runtimeMissing(runtime) : undefined;
    it.skipIf(missing !== undefined)(`${runtime}${missing ? `: skipped, ${missing}` : ''}: main.ts imports ./echo.ts and answers`, async () => {
      const { dir, env } = project();
      writeFileSync(join(dir, 'package.json'), '{ "name": "echo", "private": true, "type": "module" }\n');
      writeFiles(dir, testing.filter((block) => ['echo.ts', 'main.ts'].includes(fileName(block) ?? '')));
      const result = await run([...runtimeArgv(runtime), 'main.ts', '{"text": "hi"}'], { cwd: dir, env });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ text: 'hi' });
    }, 60_000);
  }
});

describe.skipIf(!hasNpm)(`docs/distributing.md, as written${hasNpm ? '' : ': skipped, npm is not on the PATH'}`, () => {
  it('builds one file, packs it as a package with a bin, installs that offline and runs it by name', async () => {
    const { dir, env } = project();
    writeFiles(dir, testing.filter((block) => ['echo.ts', 'main.ts'].includes(fileName(block) ?? '')));
    expect(writeFiles(dir, distributing)).toEqual(['package.json']);
    await runCommands(distributing, dir, env);
  }, 180_000);
});

const node22 = runtimeBinary('node22');
const noInspector = !hasNpm ? 'npm is not on the PATH' : node22 === undefined ? runtimeMissing('node22') : undefined;

describe.skipIf(noInspector !== undefined)(`docs/testing-tools.md, the MCP Inspector CLI${noInspector ? `: skipped, ${noInspector}` : ''}`, () => {
  it('calls the tool through twylt-mcp, the bridge after --', async () => {
    const { dir, env } = project();
    writeFileSync(join(dir, 'package.json'), '{ "name": "echo", "private": true, "type": "module" }\n');
    writeFiles(dir, testing.filter((block) => ['echo.ts', 'main.ts'].includes(fileName(block) ?? '')));
    const blocks = testingPage.filter((block) => block.heading === INSPECTOR);
    expect(writeFiles(dir, blocks)).toEqual(['tools.json']);
    // The Inspector needs Node 22.19 (fetched by npx from the registry, or its cache); twylt-mcp is this repository's.
    const bin = join(dir, 'node_modules/.bin');
    // The project's bin entry is a link into this repository: replace the link, never write through it.
    rmSync(join(bin, 'twylt-mcp'), { force: true });
    writeFileSync(join(bin, 'twylt-mcp'), `#!/bin/sh\nexec node '${join(ROOT, 'packages/twylt-mcp/dist/cli.js')}' "$@"\n`, { mode: 0o755 });
    const inspectorEnv = { ...env, npm_config_offline: 'false', npm_config_prefer_offline: 'true', PATH: `${dirname(node22!)}:${bin}:${env.PATH}` };
    await runCommands(blocks, dir, inspectorEnv, 360_000);
  }, 420_000);
});

/** A stand-in home for the pages that scan: python3 (the real interpreter, linked), twylt and twylt-mcp on PATH in its bin, the caches under it. */
function scanHome(): { home: string; bin: string; env: NodeJS.ProcessEnv } {
  const home = realpathSync(mkdtempSync(join(scratch, 'home-')));
  const bin = join(home, 'bin');
  mkdirSync(bin);
  if (python) symlinkSync(python, join(bin, 'python3'));
  writeFileSync(join(bin, 'twylt'), `#!/bin/sh\nexec '${process.execPath}' '${join(ROOT, 'packages/twylt/dist/cli/main.js')}' "$@"\n`, { mode: 0o755 });
  writeFileSync(join(bin, 'twylt-mcp'), `#!/bin/sh\nexec '${process.execPath}' '${join(ROOT, 'packages/twylt-mcp/dist/cli.js')}' "$@"\n`, { mode: 0o755 });
  // HOME stays (pip finds its configuration there); the caches go under the stand-in home.
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}`, NO_COLOR: '1', npm_config_update_notifier: 'false' };
  for (const key of Object.keys(env)) if (/^(VITEST|TWYLT_|INPUT_DESCRIBE$|NODE_OPTIONS$|PYTHONPATH$)/.test(key)) delete env[key];
  env.XDG_CACHE_HOME = join(home, '.cache');
  env.XDG_STATE_HOME = join(home, '.local', 'state');
  return { home, bin, env };
}

const isInspector = (block: Block) => block.body.includes('@modelcontextprotocol/inspector');
/** The Inspector's run: Node 22 first on PATH, npx from its cache or the registry. */
const inspectorPath = (env: NodeJS.ProcessEnv) => ({ ...env, npm_config_prefer_offline: 'true', PATH: `${dirname(node22!)}:${env.PATH}` });
const pythonTools = fencedBlocks(readDoc('docs/python-tools.md'));

describe.skipIf(noPython)(`docs/python-tools.md, as written${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  it('its tool describes without its dependency, is needs_install, installed by --install and written to the catalog', async () => {
    expect(pythonImports('tomli_w'), 'tomli-w must not be installed for this python3').toBe(false);
    const { home, env } = scanHome();
    const project = join(home, 'project');
    mkdirSync(join(project, 'tools', 'to_toml'), { recursive: true });
    expect(writeFiles(project, pythonTools)).toEqual(['tools/to_toml/tool.py']);
    // What differs from run to run: the home's path, an environment's hash.
    const normalize = (text: string) => text.split(home).join('/home/me').replace(/pip-[0-9a-f]{16}/g, 'pip-HASH');
    const blocks = pythonTools.filter((block) => block.lang === 'console' && !isInspector(block));
    expect(blocks).toHaveLength(3);
    for (const block of blocks) {
      const steps = consoleSteps(block);
      const outputs = await runSession(steps, { cwd: project, env, timeoutMs: 240_000 });
      steps.forEach((step, i) => {
        if (!showsAs(step.shown, outputs[i]!, normalize)) expect.fail(`line ${block.line}: $ ${step.command}\nthe page shows:\n${step.shown}\nit printed:\n${outputs[i]}`);
      });
    }
    // The Inspector's call (Node 22.19, the Inspector from npx's cache or the registry).
    if (node22 === undefined || !hasNpm) return;
    const [inspector] = pythonTools.filter(isInspector);
    const [step] = consoleSteps(inspector!);
    const [output] = await runSession([step!], { cwd: project, env: inspectorPath(env), timeoutMs: 240_000 });
    if (!showsAs(step!.shown, output!)) expect.fail(`line ${inspector!.line}: $ ${step!.command}\nthe page shows:\n${step!.shown}\nit printed:\n${output}`);
  }, 300_000);
});

/** A catalog of one tool: the repository's echo example, run by the tests' TypeScript runtime. */
const ECHO_CATALOG = JSON.stringify({ tools: [{ command: [...TS_RUNTIME, join(ROOT, 'examples/echo/tool.ts')] }] });

describe('docs/hub.md, the MCP Inspector CLI with the bridge after --', () => {
  const [block] = blocksUnder(readDoc('docs/hub.md'), 'Started by an MCP client', 'console');
  const [step] = block ? consoleSteps(block) : [];
  const words = (step?.command ?? '').split(' ');
  const cut = words.indexOf('--');

  it('the Inspector gets no --config; after -- comes the bridge command exactly as twylt-mcp parses it', async () => {
    expect(step?.command).toMatch(/^npx -y @modelcontextprotocol\/inspector@[\d.]+ --cli /);
    expect(cut).toBeGreaterThan(0);
    expect(words.slice(0, cut)).not.toContain('--config');
    const bridge = words.slice(cut + 1, words.indexOf('2>'));
    expect(bridge).toEqual(['twylt-mcp', '--config', 'catalog.json']);
    // What the Inspector starts: that command, as argv, in the folder with the catalog.
    const dir = mkdtempSync(join(scratch, 'hub-inspector-'));
    writeFileSync(join(dir, 'catalog.json'), ECHO_CATALOG);
    const served = await startBridge(bridge.slice(1), {}, [process.execPath, join(ROOT, 'packages/twylt-mcp/dist/cli.js')], dir);
    try {
      expect((await served.client.listTools()).tools.map((tool) => tool.name)).toHaveLength(1);
    } finally {
      await served.close();
    }
  }, 60_000);

  it.skipIf(noInspector !== undefined)(`runs as written and lists the catalog's tools${noInspector ? `: skipped, ${noInspector}` : ''}`, async () => {
    const { home, env } = scanHome();
    writeFileSync(join(home, 'catalog.json'), ECHO_CATALOG);
    const [output] = await runSession([step!], { cwd: home, env: inspectorPath(env), timeoutMs: 240_000 });
    if (!showsAs(step!.shown, output!)) expect.fail(`$ ${step!.command}\nthe page shows:\n${step!.shown}\nit printed:\n${output}`);
    expect((JSON.parse(output!) as { tools: { name: string }[] }).tools).toHaveLength(1);
  }, 300_000);
});
