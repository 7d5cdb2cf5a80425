/**
 * The README's install route, as written: pack the workspaces into tarballs, install them
 * into a fresh project, run the quick-start tool there and the installed `twylt` bin.
 * Home is a temporary folder holding the clone (`~/twylt`, a link to this repository), so
 * the README's commands run unchanged. npm works from its cache (`prefer-offline`): the
 * tarballs `npm ci` fetched, and the package documents of earlier installs.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/process.js';
import { runtimeBinary, runtimeMissing } from '../support/runtimes.js';
import { blocksUnder, consoleSteps, readDoc, runSession, showsAs } from './markdown.js';
import { startBridge, waitFor } from '../support/mcp.js';
import { startOtlpReceiver } from '../observe/support.js';

function npmCache(): string | undefined {
  try {
    return execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

const cache = npmCache();
const NO_NPM = 'npm is not on the PATH: the install route cannot be followed';
const README = readDoc('README.md');
const bun = runtimeBinary('bun');

describe.skipIf(cache === undefined)(`the README's tarball install${cache === undefined ? `: skipped, ${NO_NPM}` : ''}`, () => {
  const home = mkdtempSync(join(tmpdir(), 'twylt-install-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  symlinkSync(ROOT, join(home, 'twylt'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    npm_config_cache: cache,
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  for (const key of ['TWYLT_DEBUG', 'TWYLT_ERROR_FORMAT', 'INPUT_DESCRIBE', 'NODE_OPTIONS']) delete env[key];
  const project = join(home, 'my-tool');

  it('packs the workspaces and installs twylt, zod and tsx into a new project', async () => {
    const route = blocksUnder(README, 'Install', 'sh').find((block) => block.body.includes('npm pack'));
    expect(route, 'the README shows the tarball route').toBeDefined();
    const result = await run(['sh', '-ec', route!.body], { cwd: home, env, timeoutMs: 240_000 });
    expect(result.code, result.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    expect(manifest.type).toBe('module');
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['twylt', 'zod']);
    expect(manifest.dependencies.twylt).toMatch(/^file:.*twylt-0\.\d+\.\d+\.tgz$/);
    expect(readFileSync(join(project, 'node_modules/twylt/package.json'), 'utf8')).toContain('"name": "twylt"');
  }, 300_000);

  it("runs the quick start's tool and commands there, printing what the README shows", async () => {
    const [code] = blocksUnder(README, 'Quick start: write a tool', 'ts');
    writeFileSync(join(project, 'echo.ts'), code!.body);
    const [session] = blocksUnder(README, 'Quick start: write a tool', 'console');
    const steps = consoleSteps(session!);
    expect(steps.length).toBeGreaterThanOrEqual(3);
    const outputs = await runSession(steps, { cwd: project, env, timeoutMs: 120_000 });
    steps.forEach((step, i) => {
      if (!showsAs(step.shown, outputs[i]!)) expect.fail(`$ ${step.command}\nthe README shows:\n${step.shown}\nit printed:\n${outputs[i]}`);
    });
  }, 150_000);

  it('installs twylt and twylt-mcp globally from the tarballs, into a temporary prefix', async () => {
    const install = blocksUnder(README, 'Install', 'sh').find((block) => block.body.includes('npm install -g'));
    expect(install, 'the README shows the global install').toBeDefined();
    const prefix = join(home, 'global');
    const globalEnv = { ...env, npm_config_prefix: prefix, PATH: `${join(prefix, 'bin')}:${env.PATH}` };
    const result = await run(['sh', '-ec', install!.body], { cwd: home, env: globalEnv, timeoutMs: 240_000 });
    expect(result.code, result.stderr).toBe(0);
    // Nothing but the prefix: the commands found are the ones just installed.
    const session = blocksUnder(README, 'Install', 'console').find((block) => block.body.includes('twylt-mcp --version'))!;
    const steps = consoleSteps(session);
    const outputs = await runSession([...steps, { command: 'command -v twylt && command -v twylt-mcp', shown: '' }], { cwd: home, env: globalEnv, timeoutMs: 60_000 });
    steps.forEach((step, i) => {
      if (!showsAs(step.shown, outputs[i]!)) expect.fail(`$ ${step.command}\nthe README shows:\n${step.shown}\nit printed:\n${outputs[i]}`);
    });
    expect(outputs.at(-1)).toBe(`${join(prefix, 'bin/twylt')}\n${join(prefix, 'bin/twylt-mcp')}\n`);
  }, 300_000);

  // Issue 36: the OpenTelemetry packages were dependencies of twylt-mcp, imported by twylt;
  // in a global prefix each package has its own tree, and traces stopped the bridge.
  it('the globally installed twylt-mcp serves a tool with metrics and traces on', async () => {
    const prefix = join(home, 'global');
    const receiver = await startOtlpReceiver();
    const bridge = await startBridge(
      ['--metrics', '127.0.0.1:0', '--', process.execPath, join(ROOT, 'tests/fixtures/mcp/traceparent.mjs')],
      {
        HOME: home,
        PATH: `${join(prefix, 'bin')}:${env.PATH}`,
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
      [join(prefix, 'bin/twylt-mcp')],
      home,
    ).catch(async (error) => {
      await receiver.close();
      throw error;
    });
    try {
      const { tools } = await bridge.client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      const result = await bridge.client.callTool({ name: tools[0]!.name, arguments: {} });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      await waitFor(() => receiver.spans().some((span) => span.name === `tools/call ${tools[0]!.name}`), `the span of the call; stderr: ${bridge.stderr()}`, 20_000);
      const url = /metrics at (http:\S+)/.exec(bridge.stderr())?.[1];
      expect(url, bridge.stderr()).toBeDefined();
      const metrics = await (await fetch(url!)).text();
      expect(metrics).toMatch(new RegExp(`^mcp_server_operation_duration_seconds_count\\{[^}]*gen_ai_tool_name="${tools[0]!.name}"`, 'm'));
    } finally {
      await bridge.close();
      await receiver.close();
    }
  }, 60_000);

  it.skipIf(bun === undefined)(`runs the CLI under Bun with --bun, and with Node without it${bun === undefined ? `: skipped, ${runtimeMissing('bun')}` : ''}`, async () => {
    const bunEnv = { ...env, PATH: `${dirname(bun!)}:${env.PATH}` };
    const session = blocksUnder(README, 'Install', 'console').find((block) => block.body.includes('bun --bun'))!;
    const steps = consoleSteps(session);
    const outputs = await runSession(steps, { cwd: project, env: bunEnv, timeoutMs: 120_000 });
    steps.forEach((step, i) => {
      if (!showsAs(step.shown, outputs[i]!)) expect.fail(`$ ${step.command}\nthe README shows:\n${step.shown}\nit printed:\n${outputs[i]}`);
    });
    // Which runtime ran the command: a Node snapshot build refuses to run under Bun, naming
    // it, and Node makes the snapshot (esbuild is there: tsx depends on it).
    const build = 'x twylt build echo.ts --snapshot-blob -o echo.blob';
    const [underBun, underNode] = await runSession(
      [{ command: `bun --bun ${build}`, shown: '' }, { command: `bun ${build}`, shown: '' }],
      { cwd: project, env: bunEnv, timeoutMs: 120_000 },
    );
    expect(underBun).toMatch(/and this is Bun \d+\.\d+\.\d+: run the build with Node/);
    expect(underNode).toMatch(/^twylt build: wrote echo\.blob /);
  }, 150_000);

  it('the installed twylt bin runs: --version, --help', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'packages/twylt/package.json'), 'utf8')) as { version: string };
    const bin = join(project, 'node_modules/.bin/twylt');
    const versionRun = await run([bin, '--version'], { cwd: project, env });
    expect(versionRun.stdout).toBe(`twylt ${version}\n`);
    const help = await run([bin, '--help'], { cwd: project, env });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^ {2}build /m);
  });
});
