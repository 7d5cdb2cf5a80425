/**
 * A hostile pack's links (issue 34, item 2): a pack that ships `node_modules/x -> ~/.ssh`
 * (git keeps links), or a `node_modules` that is itself a link to ~/.ssh, and puts what it
 * reads there into its description. `twylt scan --sandbox` of it, with HOME pointed at a folder holding
 * a planted key, must not carry the key into the description, the report or the catalog:
 * inside the sandbox the link dangles (ENOENT). Without --sandbox the same scan reads it
 * (the attack is real). Run as root, and as nobody where setpriv can drop to it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleTool } from '../support/bundle-tool.js';
import { ROOT } from '../support/process.js';
import { JS_RUNTIME } from '../support/runtimes.js';
import { twyltBin } from '../support/twylt-cli.js';
import { SANDBOX_SKIP_REASON } from './support.js';

const KEY = '-----BEGIN OPENSSH PRIVATE KEY----- planted-for-hostile-files';
const scratch = mkdtempSync(join(tmpdir(), 'twylt-sandbox-hostile-files-'));

const TOOL = join(ROOT, 'tests/fixtures/sandbox/linked_key.ts');

function nobodySkip(): string | undefined {
  if (process.getuid?.() !== 0) return 'the tests do not run as root, so they cannot become nobody';
  const probe = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', JS_RUNTIME[0]!, '-e', `require('fs').statSync(${JSON.stringify(twyltBin)})`]);
  if (probe.error) return 'setpriv (util-linux) is not installed';
  if (probe.status !== 0) return `nobody cannot run twylt from this checkout: ${probe.stderr.toString().trim().split('\n')[0]}`;
  return undefined;
}

const users: [string, string[], string | undefined][] = [
  ['root', [], undefined],
  ['nobody', ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'], nobodySkip()],
];

interface Scanned {
  code: number | null;
  stdout: string;
  stderr: string;
}

function scan(prefix: string[], args: string[], home: string, cwd: string): Promise<Scanned> {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '' };
  for (const key of Object.keys(env)) if (/^(TWYLT_|INPUT_DESCRIBE$|NODE_OPTIONS$)/.test(key)) delete env[key];
  const argv = [...prefix, ...JS_RUNTIME, twyltBin, 'scan', ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let bundled: string;
beforeAll(async () => {
  mkdirSync(join(scratch, 'built'));
  bundled = await bundleTool(TOOL, join(scratch, 'built'));
}, 60_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.skipIf(SANDBOX_SKIP_REASON !== undefined)(`a pack whose links point at the operator's key${SANDBOX_SKIP_REASON ? ` (skipped: ${SANDBOX_SKIP_REASON})` : ''}`, () => {
  for (const [user, prefix, skip] of users) {
    describe.skipIf(skip !== undefined)(`twylt scan as ${user}${skip ? ` (skipped: ${skip})` : ''}`, () => {
      // World-readable where nobody runs it, except the key's own folder, as ~/.ssh is.
      const base = join(scratch, user);
      const home = join(base, 'home');
      const packs = join(base, 'packs');
      beforeAll(() => {
        mkdirSync(join(home, '.ssh'), { recursive: true });
        writeFileSync(join(home, '.ssh', 'id_ed25519'), KEY);
        chmodSync(join(home, '.ssh', 'id_ed25519'), 0o600);
        chmodSync(join(home, '.ssh'), 0o700);
        const owner = user === 'nobody' ? 65534 : 0;
        for (const path of [home, join(home, '.ssh'), join(home, '.ssh', 'id_ed25519')]) spawnSync('chown', [`${owner}:${owner}`, path]);
        // A pack whose node_modules links to ~/.ssh.
        const linked = join(packs, 'linked');
        mkdirSync(join(linked, 'node_modules'), { recursive: true });
        cpSync(bundled, join(linked, 'tool.mjs'));
        writeFileSync(join(linked, 'package.json'), '{"name": "linked", "type": "module"}');
        symlinkSync(join(home, '.ssh'), join(linked, 'node_modules', 'x'));
        // A pack whose node_modules is itself a link to ~/.ssh.
        const direct = join(packs, 'modules');
        mkdirSync(direct, { recursive: true });
        cpSync(bundled, join(direct, 'tool.mjs'));
        writeFileSync(join(direct, 'package.json'), '{"name": "modules", "type": "module"}');
        symlinkSync(join(home, '.ssh'), join(direct, 'node_modules'));
        for (const dir of [base, packs, linked, direct]) chmodSync(dir, 0o755);
        // Where the catalog is written: the scanning user's.
        spawnSync('chown', [`${owner}:${owner}`, base]);
        chmodSync(scratch, 0o755);
        chmodSync(join(scratch, 'built'), 0o755);
      });

      it('without --sandbox the pack reads the key into its description (the attack is real)', async () => {
        const plain = await scan(prefix, ['--json', packs], home, base);
        const rows = (JSON.parse(plain.stdout) as { tools: { name: string; description: string | null }[] }).tools;
        expect(rows.map((row) => [row.name, row.description]).sort(), plain.stderr).toEqual([
          ['steal_linked', `READ ${KEY}`],
          ['steal_modules', `READ ${KEY}`],
        ]);
      }, 240_000);

      it('with --sandbox: no key in the report, the catalog or the descriptions; each link dangles inside (ENOENT)', async () => {
        const catalog = join(base, 'catalog.json');
        const report = await scan(prefix, ['--sandbox', '--json', packs], home, base);
        const written = await scan(prefix, ['--sandbox', '--write', catalog, packs], home, base);
        for (const output of [report.stdout, report.stderr, written.stdout, written.stderr, readFileSync(catalog, 'utf8')]) expect(output).not.toContain('planted-for-hostile-files');
        const rows = (JSON.parse(report.stdout) as { tools: { description: string | null; status: string }[] }).tools;
        expect(rows.map((row) => [row.status, row.description]).sort(), report.stderr).toEqual([
          ['ok', 'UNREADABLE ENOENT'],
          ['ok', 'UNREADABLE ENOENT'],
        ]);
      }, 240_000);
    });
  }
});
