/**
 * A lone `.ts` tool: no package.json anywhere above it, so no `"type": "module"` says that it
 * is an ES module (tests/fixtures/ts-lone, copied outside this repository, whose package.json
 * would say so). `shout` imports twylt only, `pad` also `left-pad`, which is not installed.
 *
 * Through twylt's launcher (`twylt scan`, `twylt-mcp --scan`) `shout` is `ok` and answers its
 * calls and `pad` is `needs_install` naming left-pad, twylt coming from the launcher's own
 * installation (and a lone `.ts` script that neither imports nor exports stays CommonJS); run by the user's own command (`twylt describe`/`call`/`check` and
 * `twylt-mcp --` on `node --import tsx tool.ts`, or `node tool.ts` where Node strips types),
 * with twylt in a node_modules folder beside, `shout` works too. Neither way writes into the
 * tool's folder (ADR 0035). On Node 20 through tsx and on Node 22 through type stripping.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BRIDGE_CLI, startBridge } from '../support/mcp.js';
import { ROOT, run } from '../support/process.js';
import { runTwylt } from '../support/twylt-cli.js';
import type { Row } from './support.js';
import { runtimeTitle, scratch, typeScriptNodes } from './support.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/ts-lone/', import.meta.url));
const LAUNCHER = join(ROOT, 'packages/twylt/dist/bootstrap/launch.js');
const dir = scratch('ts-lone');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** tsx starts slowly on a busy machine; a conformance check runs the tool some fifty times. */
const SLOW = 300_000;
/** Each run's own time-out: generous, as a loaded machine may need it. */
const RUN_TIMEOUT = '120000';

/** Every file under `root` with its content: what "untouched" is checked against. */
function contents(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name), 'utf8');
  }
  return out;
}

/** The fixture copied to `name` in the scratch folder, checked to have no package.json above it. */
function copyLone(name: string): string {
  const copy = join(dir, name);
  cpSync(FIXTURE, copy, { recursive: true });
  for (let at = copy; ; at = dirname(at)) {
    expect(existsSync(join(at, 'package.json')), `${at}/package.json would decide the tools' module format`).toBe(false);
    if (dirname(at) === at) break;
  }
  return copy;
}

/** The line of a `twylt` command's stderr that says why (the stack traces after it are the tool's, not this test's). */
const why = (stderr: string) => stderr.split('\n')[0];

// How a user runs the lone tool by hand: through tsx on Node 20, as it is on Node 22.
const RUNTIMES = typeScriptNodes().map((runtime) => ({
  ...runtime,
  direct: runtime.id === '20' ? [runtime.node!, '--import', import.meta.resolve('tsx')] : [runtime.node!],
}));

for (const runtime of RUNTIMES) {
  describe.skipIf(runtime.skip !== undefined)(runtimeTitle(runtime), () => {
    it(
      'through the launcher: scan finds shout ok and pad needs_install naming left-pad; shout answers calls, cold and through --scan',
      async () => {
        const node = runtime.node!;
        const lone = copyLone(`launcher-${runtime.id}`);
        const before = contents(lone);

        const scan = await runTwylt(['scan', '--json', '--envs', join(dir, `envs-${runtime.id}`), '--node', node, lone]);
        let rows: Map<string, Row>;
        try {
          rows = new Map((JSON.parse(scan.stdout) as { tools: Row[] }).tools.map((row) => [row.source.split('/').at(-2)!, row]));
        } catch {
          throw new Error(`twylt scan printed no JSON (exit ${scan.code}):\n${scan.stdout}\n${scan.stderr}`);
        }
        expect(rows.get('shout'), scan.stderr).toMatchObject({ status: 'ok', name: 'shout', version: '1.0.0' });
        const pad = rows.get('pad')!;
        expect(pad.status, pad.reason).toBe('needs_install');
        expect(pad.reason).toMatch(/npm install .* -- left-pad@\*, then a link \S+\/node_modules\/twylt -> \S+\/packages\/twylt$/);
        expect(scan.code).toBe(1); // a tool that needs an install

        // The launcher itself, as the catalog records it: a call with its input on stdin.
        const call = await run([node, LAUNCHER, join(lone, 'shout', 'tool.ts')], { input: '{"text": "hi there"}', timeoutMs: 120_000 });
        expect(call.code, call.stderr).toBe(0);
        expect(JSON.parse(call.stdout)).toEqual({ shouted: 'HI THERE' });
        const spec = await run([node, LAUNCHER, join(lone, 'pad', 'tool.ts'), '{"describe": "json_spec"}'], { timeoutMs: 120_000 });
        expect(spec.code, spec.stderr).toBe(0);
        expect(JSON.parse(spec.stdout)).toMatchObject({ name: 'pad', inputSchema: {}, outputSchema: {} });

        // A lone .ts file that neither imports nor exports stays CommonJS, as Node 22.18+ runs it.
        const script = join(dir, `commonjs-${runtime.id}`, 'script.ts');
        mkdirSync(dirname(script));
        writeFileSync(script, "const { basename } = require('node:path');\nprocess.stdout.write(basename(__filename));\n");
        const commonjs = await run([node, LAUNCHER, script], { timeoutMs: 120_000 });
        expect(commonjs, commonjs.stderr.split('\n').slice(0, 5).join('\n')).toMatchObject({ code: 0, stdout: 'script.ts' });

        // --scan runs the tools on the `node` that PATH finds: this runtime's.
        const path = `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`;
        const bridge = await startBridge(['--scan', lone, '--describe-timeout', '60000'], { PATH: path }, [node, BRIDGE_CLI]);
        try {
          expect((await bridge.client.listTools()).tools.map((tool) => tool.name)).toEqual(['shout']);
          const result = await bridge.client.callTool({ name: 'shout', arguments: { text: 'served' } });
          expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
          expect(result.structuredContent).toEqual({ shouted: 'SERVED' });
        } finally {
          await bridge.close();
        }

        expect(contents(lone)).toEqual(before);
      },
      SLOW,
    );

    it(
      "by the user's own command, twylt beside it: describe, call, check and twylt-mcp -- work on shout; pad fails naming left-pad",
      async () => {
        const lone = copyLone(`direct-${runtime.id}`);
        // Where a user without a package.json has twylt: a node_modules folder above the tool.
        mkdirSync(join(lone, 'node_modules'));
        symlinkSync(join(ROOT, 'packages', 'twylt'), join(lone, 'node_modules', 'twylt'), 'dir');
        const before = contents(join(lone, 'shout'));
        const shout = [...runtime.direct, join(lone, 'shout', 'tool.ts')];

        const described = await runTwylt(['describe', '--json', '--timeout', RUN_TIMEOUT, '--', ...shout], { cwd: lone });
        expect(described.code, why(described.stderr)).toBe(0);
        expect(JSON.parse(described.stdout)).toMatchObject({ name: 'shout', inputSchema: { required: ['text'] } });

        const called = await runTwylt(['call', '--json', '--timeout', RUN_TIMEOUT, '--input', '{"text": "direct"}', '--', ...shout], { cwd: lone });
        expect(called.code, why(called.stderr)).toBe(0);
        expect(JSON.parse(called.stdout)).toEqual({ shouted: 'DIRECT' });

        const checked = await runTwylt(['check', '--timeout', RUN_TIMEOUT, '--', ...shout], { cwd: lone });
        expect(checked.code, checked.stdout.split('\n').filter((line) => line.startsWith('FAIL')).join('\n') || why(checked.stderr)).toBe(0);
        expect(checked.stdout).toMatch(/\d+ passed, 0 failed/);

        // Run directly, a tool whose package is missing fails with Node's own error, as a .mjs one does.
        const pad = await runTwylt(['describe', '--timeout', RUN_TIMEOUT, '--', ...runtime.direct, join(lone, 'pad', 'tool.ts')], { cwd: lone });
        expect(pad.code).toBe(1);
        expect(pad.stderr).toMatch(/Cannot find (module|package) 'left-pad'/);

        const bridge = await startBridge(['--', ...shout]);
        try {
          const result = await bridge.client.callTool({ name: 'shout', arguments: { text: 'bridged' } });
          expect(result.structuredContent).toEqual({ shouted: 'BRIDGED' });
        } finally {
          await bridge.close();
        }

        expect(contents(join(lone, 'shout'))).toEqual(before);
      },
      SLOW,
    );
  });
}
