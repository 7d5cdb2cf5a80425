/**
 * A pack manifest's `bootstrap` (the launcher run instead of the entry point) must stay in
 * the pack, as `entrypoint` must (issue 34: a bootstrap outside the pack, silently ignored,
 * went unnoticed). Outside the pack, as written or once links are followed, it is the
 * entry's failed row naming the field, and nothing of that entry runs, neither the
 * bootstrap nor the entry point in its place. Missing, the entry point runs (a launcher
 * named but not shipped); inside, the launcher runs.
 */
import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { discoverTools } from '../../packages/twylt/src/toolset/catalog/discover.js';
import { NO_PYTHON_REASON, noPython } from '../support/python.js';
import { type Row, scan, scratch } from './support.js';

const dir = scratch('manifest-bootstrap');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file that leaves `ran-NAME` in the test's folder if anything runs it. */
function marker(file: string, name: string): void {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, `open(${JSON.stringify(join(dir, `ran-${name}`))}, "w").write("ran")\n`);
}

/** A pack whose tools[i] is `{name, entrypoint: tools/NAME/tool.py, bootstrap}` for each of `boots`. */
function pack(boots: Record<string, string>): string {
  const root = join(dir, 'pack');
  for (const name of Object.keys(boots)) marker(join(root, 'tools', name, 'tool.py'), `${name}-entry`);
  marker(join(root, 'tools', 'inside', 'run.py'), 'inside-bootstrap');
  marker(join(dir, 'outside', 'run.py'), 'outside-bootstrap');
  symlinkSync(join(dir, 'outside', 'run.py'), join(root, 'tools', 'linked', 'run.py'));
  const tools = Object.entries(boots).map(([name, bootstrap]) => ({ name, entrypoint: `tools/${name}/tool.py`, bootstrap }));
  writeFileSync(join(root, 'manifest.json'), JSON.stringify({ name: 'boots', version: '1.0.0', tools }));
  return root;
}

const BOOTS = {
  climbing: '../outside/run.py',
  absolute: join(dir, 'outside', 'run.py'),
  linked: 'tools/linked/run.py',
  missing: 'tools/missing/run.py',
  inside: 'tools/inside/run.py',
};

describe('a manifest bootstrap', () => {
  const root = pack(BOOTS);
  const manifest = join(root, 'manifest.json');

  it('outside the pack is a refusal naming the field; missing, the entry point; inside, the launcher', async () => {
    const found = await discoverTools(root);
    expect(found.filter((tool) => tool.problem).map((tool) => tool.problem)).toEqual([
      `${manifest}: tools[0] ("climbing"): "bootstrap" "../outside/run.py" is outside the pack`,
      `${manifest}: tools[1] ("absolute"): "bootstrap" "${BOOTS.absolute}" is outside the pack`,
      `${manifest}: tools[2] ("linked"): "bootstrap" "tools/linked/run.py" leads outside the pack (to ${BOOTS.absolute})`,
    ]);
    // Refused entries run nothing in their place: only the missing one's entry point and the inside launcher.
    expect(found.filter((tool) => !tool.problem).map((tool) => tool.source)).toEqual([join(root, 'tools', 'inside', 'run.py'), join(root, 'tools', 'missing', 'tool.py')]);
  });

  it.skipIf(noPython)(`is never run from outside the pack by a scan${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, async () => {
    // Not scanJson: its rows are by file, and every manifest row has the manifest's.
    const rows = (JSON.parse((await scan(['--json', root])).stdout) as { tools: Row[] }).tools;
    expect(rows.filter((row) => row.source === manifest).map((row) => [row.name, row.status])).toEqual([
      ['climbing', 'failed'],
      ['absolute', 'failed'],
      ['linked', 'failed'],
    ]);
    expect(readdirSync(dir).filter((name) => name.startsWith('ran-')).sort()).toEqual(['ran-inside-bootstrap', 'ran-missing-entry']);
  });
});
