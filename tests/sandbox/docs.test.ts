/**
 * docs/sandbox.md, tested as written (ADR 0020): its tool file is written into a project
 * inside this repository (git-ignored .tests-tmp/), which finds the repository's
 * node_modules above it as an npm workspace does, with a note in it and a secret beside it;
 * its commands run there and print what the page shows. (A project whose node_modules link
 * out to the repository's would get dangling links in the sandbox: a link is followed only
 * inside the folder holding that node_modules.)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { consoleSteps, fencedBlocks, fileName, readDoc, runSession, showsAs } from '../docs/markdown.js';
import { ROOT } from '../support/process.js';
import { SANDBOX_SKIP_REASON } from './support.js';

mkdirSync(join(ROOT, '.tests-tmp'), { recursive: true });
const scratch = mkdtempSync(join(ROOT, '.tests-tmp', 'sandbox-docs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.skipIf(SANDBOX_SKIP_REASON !== undefined)(`docs/sandbox.md, as written${SANDBOX_SKIP_REASON ? ` (skipped: ${SANDBOX_SKIP_REASON})` : ''}`, () => {
  it('its tool reads a note in its workspace, and not a secret beside it', async () => {
    const dir = join(scratch, 'project');
    const bin = join(scratch, 'bin');
    mkdirSync(dir);
    mkdirSync(bin);
    writeFileSync(join(bin, 'twylt'), `#!/bin/sh\nexec '${process.execPath}' '${join(ROOT, 'packages/twylt/dist/cli/main.js')}' "$@"\n`, { mode: 0o755 });
    writeFileSync(join(dir, 'package.json'), '{ "name": "notes", "private": true, "type": "module" }\n');
    writeFileSync(join(dir, 'notes.txt'), 'my notes\n');
    writeFileSync(join(scratch, 'secret.txt'), 'the secret\n');

    const blocks = fencedBlocks(readDoc('docs/sandbox.md'));
    const files = blocks.filter((block) => fileName(block));
    expect(files.map((block) => fileName(block))).toEqual(['read_file.mjs']);
    for (const block of files) writeFileSync(join(dir, fileName(block)!), block.body);

    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}`, NO_COLOR: '1' };
    for (const key of Object.keys(env)) if (/^(VITEST|TWYLT_|INPUT_DESCRIBE$|NODE_OPTIONS$)/.test(key)) delete env[key];
    const sessions = blocks.filter((block) => block.lang === 'console');
    expect(sessions.length).toBeGreaterThan(0);
    for (const block of sessions) {
      const steps = consoleSteps(block);
      const outputs = await runSession(steps, { cwd: dir, env, timeoutMs: 120_000 });
      steps.forEach((step, i) => {
        if (!showsAs(step.shown, outputs[i]!)) expect.fail(`line ${block.line}: $ ${step.command}\nthe page shows:\n${step.shown}\nit printed:\n${outputs[i]}`);
      });
      // Unsandboxed, the same tool reads the secret: the page's second command fails only because of --sandbox.
      const [plain] = await runSession([{ command: `twylt call --input '{"path": "../secret.txt"}' -- node read_file.mjs`, shown: '' }], { cwd: dir, env, timeoutMs: 120_000 });
      expect(plain).toContain('the secret');
    }
  }, 240_000);
});
