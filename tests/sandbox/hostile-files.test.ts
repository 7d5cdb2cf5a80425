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
import { AS_NOBODY, NOBODY, UNPRIVILEGED_SKIP_REASON, type UnprivilegedCopy, unprivilegedCopy } from '../support/unprivileged.js';
import { SANDBOX_SKIP_REASON } from './support.js';

const KEY = '-----BEGIN OPENSSH PRIVATE KEY----- planted-for-hostile-files';
const scratch = mkdtempSync(join(tmpdir(), 'twylt-sandbox-hostile-files-'));

const TOOL = join(ROOT, 'tests/fixtures/sandbox/linked_key.ts');

/**
 * Who scans: root, with the checkout's twylt, and nobody, with a world-readable copy of the
 * built packages (tests/support/unprivileged.ts): nobody never runs what is in the checkout,
 * which it cannot read when a folder above it is private (issue 38).
 */
const users: { user: string; skip: string | undefined }[] = [
  { user: 'root', skip: undefined },
  { user: 'nobody', skip: UNPRIVILEGED_SKIP_REASON },
];

interface Scanned {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `twylt scan ARGS...` by `twylt` (argv), in `cwd`, with HOME `home`. */
function scan(twylt: readonly string[], args: string[], home: string, cwd: string): Promise<Scanned> {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '' };
  for (const key of Object.keys(env)) if (/^(TWYLT_|INPUT_DESCRIBE$|NODE_OPTIONS$)/.test(key)) delete env[key];
  const argv = [...twylt, 'scan', ...args];
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
  for (const { user, skip } of users) {
    describe.skipIf(skip !== undefined)(`twylt scan as ${user}${skip ? ` (skipped: ${skip})` : ''}`, () => {
      // World-readable where nobody runs it, except the key's own folder, as ~/.ssh is.
      let copy: UnprivilegedCopy | undefined;
      let twylt: readonly string[];
      let base: string;
      let home: string;
      let packs: string;
      beforeAll(() => {
        if (user === 'nobody') {
          copy = unprivilegedCopy();
          twylt = [...AS_NOBODY, process.execPath, copy.path('packages/twylt/dist/cli/main.js')];
          base = copy.scratch(user);
        } else {
          twylt = [...JS_RUNTIME, twyltBin];
          base = join(scratch, user);
        }
        home = join(base, 'home');
        packs = join(base, 'packs');
        mkdirSync(join(home, '.ssh'), { recursive: true });
        writeFileSync(join(home, '.ssh', 'id_ed25519'), KEY);
        chmodSync(join(home, '.ssh', 'id_ed25519'), 0o600);
        chmodSync(join(home, '.ssh'), 0o700);
        const owner = user === 'nobody' ? NOBODY.uid : 0;
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
      });
      afterAll(() => copy?.remove());

      it('without --sandbox the pack reads the key into its description (the attack is real)', async () => {
        const plain = await scan(twylt, ['--json', packs], home, base);
        const rows = (JSON.parse(plain.stdout) as { tools: { name: string; description: string | null }[] }).tools;
        expect(rows.map((row) => [row.name, row.description]).sort(), plain.stderr).toEqual([
          ['steal_linked', `READ ${KEY}`],
          ['steal_modules', `READ ${KEY}`],
        ]);
      }, 240_000);

      it('with --sandbox: no key in the report, the catalog or the descriptions; each link dangles inside (ENOENT)', async () => {
        const catalog = join(base, 'catalog.json');
        const report = await scan(twylt, ['--sandbox', '--json', packs], home, base);
        const written = await scan(twylt, ['--sandbox', '--write', catalog, packs], home, base);
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
