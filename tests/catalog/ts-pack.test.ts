/**
 * A TypeScript pack from elsewhere with npm dependencies (tests/fixtures/ts-pack: slugify,
 * zod, twylt; a .ts class tool and a .mjs defineTool tool sharing code), copied outside this
 * repository: `twylt scan` finds it `needs_install` naming its packages, `--install` puts them
 * in the environment cache, the tools are then `ok`, served by twylt-mcp (--config and --scan)
 * cold and warm, and
 * the pack folder is never written to (ADR 0035). On Node 20 through tsx (the one beside
 * twylt), on Node 22 through type stripping, on Bun. The npm registry must be reachable.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BRIDGE_CLI, startBridge } from '../support/mcp.js';
import { ROOT } from '../support/process.js';
import { runtimeBinary, runtimeMissing } from '../support/runtimes.js';
import { twyltBin } from '../support/twylt-cli.js';
import type { Row } from './support.js';
import { runtimeTitle, scratch, typeScriptNodes, type ScanRuntime } from './support.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/ts-pack/', import.meta.url));
const dir = scratch('ts-pack');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** Shared by the runtimes: each Node major gets environments of its own (the key has it). */
const envs = join(dir, 'envs');
/** Installs reach the network. */
const SLOW = 300_000;

/** Every file under `root` with its size and content hash: what "untouched" is checked against. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else out[relative(root, path)] = `${statSync(path).mtimeMs} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
    }
  };
  walk(root);
  return out;
}

/** `twylt scan --json ARGS` on `node`, its tools on the same `node`: the exit code and the rows by tool name. */
function scan(node: string, args: string[]): Promise<{ code: number | null; rows: Map<string, Row>; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [twyltBin, 'scan', '--json', '--envs', envs, '--node', node, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        const rows = (JSON.parse(stdout) as { tools: Row[] }).tools;
        resolve({ code, stderr, rows: new Map(rows.map((row) => [row.source.split('/').at(-2)!, row])) });
      } catch {
        reject(new Error(`twylt scan printed no JSON (exit ${code}):\n${stdout}\n${stderr}`));
      }
    });
  });
}

const bun = runtimeBinary('bun');
const RUNTIMES: ScanRuntime[] = [
  ...typeScriptNodes(),
  // Bun reads NODE_PATH for imports itself; the environment's link gives it twylt.
  { id: 'bun', label: 'Bun', node: bun, skip: bun === undefined ? runtimeMissing('bun') : undefined },
];

for (const runtime of RUNTIMES) {
  describe.skipIf(runtime.skip !== undefined)(runtimeTitle(runtime), () => {
    it(
      'needs_install -> --install -> ok -> served (--config, --scan) cold and warm, the pack folder untouched',
      async () => {
        const node = runtime.node!;
        const pack = join(dir, `pack-${runtime.id}`);
        cpSync(FIXTURE, pack, { recursive: true });
        const before = snapshot(pack);

        // Before any install: each tool describes itself through the launcher and names its packages.
        const first = await scan(node, [pack]);
        expect(first.code, first.stderr).toBe(1);
        expect([...first.rows.keys()].sort()).toEqual(['initials', 'slug']);
        for (const row of first.rows.values()) {
          expect(row.status, row.reason).toBe('needs_install');
          expect(row.category).toBe(`pack-${runtime.id}`);
          expect(row.reason).toMatch(/`twylt scan --install \S+` installs them, running: npm install .* --prefix \S+ -- slugify@\^1\.6\.6 zod@\^4\.0\.0, then a link \S+\/node_modules\/twylt -> \S+\/packages\/twylt$/);
          // twylt is not on the npm registry: it is never asked from there.
          expect(row.reason).not.toMatch(/twylt@/);
        }
        expect(first.rows.get('slug')!.name).toBe('slug');

        const catalog = join(dir, `catalog-${runtime.id}.json`);
        const second = await scan(node, [pack, '--install', '--write', catalog]);
        expect(second.code, second.stderr).toBe(0);
        const slug = second.rows.get('slug')!;
        expect(slug).toMatchObject({ status: 'ok', name: 'slug', version: '1.2.0' });
        const modules = slug.env!.NODE_PATH!;
        expect(modules.startsWith(`${envs}/npm-`)).toBe(true);
        expect(second.rows.get('initials')).toMatchObject({ status: 'ok', env: { NODE_PATH: modules } });
        expect(readdirSync(modules).sort()).toEqual(expect.arrayContaining(['slugify', 'twylt', 'zod']));
        expect(readlinkSync(join(modules, 'twylt'))).toBe(join(ROOT, 'packages', 'twylt'));

        const bridgeCommand = [node, BRIDGE_CLI];
        // The catalog cold and warm, then the folder itself (--scan finds the environment the install made).
        const serves = [['--config', catalog], ['--config', catalog, '--warm', '1'], ['--scan', pack, '--describe-timeout', '60000', '--warm', '1']];
        for (const args of serves) {
          const bridge = await startBridge(args, { TWYLT_ENVS_DIR: envs }, bridgeCommand);
          try {
            expect((await bridge.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['initials', 'slug']);
            for (const text of ['Hello Wide World', 'Ünïcode and   spaces']) {
              const result = await bridge.client.callTool({ name: 'slug', arguments: { text } });
              expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
              expect(result.structuredContent).toEqual(text.startsWith('Hello') ? { slug: 'hello-wide-world', words: 3 } : { slug: 'unicode-and-spaces', words: 3 });
            }
            const initials = await bridge.client.callTool({ name: 'initials', arguments: { text: 'Portable Network Graphics' } });
            expect(initials.structuredContent).toEqual({ initials: 'png' });
          } finally {
            await bridge.close();
          }
        }

        expect(snapshot(pack)).toEqual(before);
        expect(existsSync(join(pack, 'node_modules'))).toBe(false);
        expect(existsSync(join(pack, 'package-lock.json'))).toBe(false);
      },
      SLOW,
    );
  });
}
