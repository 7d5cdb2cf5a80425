/**
 * docs/hub.md, "The published pack format", as written: its session runs in a home whose
 * `packs` folder holds the three fixture packs in the published format, their `twylt`
 * library on PYTHONPATH, `twylt` on PATH, the environment cache the default one under
 * XDG_CACHE_HOME.
 * The install reaches the machine's pip index (tomli-w), as install.test.ts does.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blocksUnder, consoleSteps, readDoc, runSession, showsAs } from '../docs/markdown.js';
import { ROOT } from '../support/process.js';
import { NO_PYTHON_REASON, noPython, python } from '../support/python.js';
import { PACKS } from './support.js';

const home = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-hub-doc-')));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** What differs from run to run: the home's path, an environment's hash. */
const normalize = (text: string) => text.split(home).join('/home/me').replace(/pip-[0-9a-f]{16}/g, 'pip-HASH');

describe.skipIf(noPython)(`docs/hub.md, the published pack format, as written${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  it('scans, installs and finds every tool ok', async () => {
    cpSync(join(PACKS, 'published'), join(home, 'packs'), { recursive: true });
    const bin = join(home, 'bin');
    mkdirSync(bin);
    // python3 is the real interpreter, not a version manager's shim (a second per start).
    if (python) symlinkSync(python, join(bin, 'python3'));
    writeFileSync(join(bin, 'twylt'), `#!/bin/sh\nexec '${process.execPath}' '${join(ROOT, 'packages/twylt/dist/cli/main.js')}' "$@"\n`, { mode: 0o755 });
    // HOME stays (pip finds its configuration there); the cache goes under the stand-in home.
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH}`, PYTHONPATH: join(PACKS, 'pylib'), NO_COLOR: '1' };
    for (const key of Object.keys(env)) if (/^(VITEST|TWYLT_|INPUT_DESCRIBE$|NODE_OPTIONS$)/.test(key)) delete env[key];
    env.XDG_CACHE_HOME = join(home, '.cache');
    env.XDG_STATE_HOME = join(home, '.local', 'state');
    const blocks = blocksUnder(readDoc('docs/hub.md'), 'The published pack format', 'console');
    expect(blocks).toHaveLength(1);
    const steps = consoleSteps(blocks[0]!);
    const outputs = await runSession(steps, { cwd: home, env, timeoutMs: 280_000 });
    steps.forEach((step, i) => {
      if (!showsAs(step.shown, outputs[i]!, normalize)) expect.fail(`$ ${step.command}\nthe page shows:\n${step.shown}\nit printed:\n${outputs[i]}`);
    });
    // The catalog the page writes names the runtime by what it is.
    expect(JSON.parse(readFileSync(join(home, 'catalog.json'), 'utf8')).tools.every((tool: { command: string[] }) => tool.command[0] === 'python3')).toBe(true);
  }, 300_000);
});
