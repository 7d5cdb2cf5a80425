/** The examples run from their TypeScript sources as the README says (`npx tsx examples/<name>/tool.ts`). */
import { describe, expect, it } from 'vitest';
import { ROOT, example, run } from '../support/process.js';

const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

describe('examples from source with npx tsx, from the repository root', () => {
  for (const name of ['echo', 'echo_json_schema', 'list_directory', 'probe']) {
    it(`${name}: the source and the compiled file publish the same json_spec`, async () => {
      const fromSource = await run([npx, 'tsx', `examples/${name}/tool.ts`], { cwd: ROOT, env: { INPUT_DESCRIBE: 'json_spec' } });
      const compiled = await run(example(name), { cwd: ROOT, env: { INPUT_DESCRIBE: 'json_spec' } });
      expect(fromSource.code).toBe(0);
      expect(fromSource.stdout).toBe(compiled.stdout);
    });
  }
  it('echo answers a call from source', async () => {
    const r = await run([npx, 'tsx', 'examples/echo/tool.ts', '{"text": "from source"}'], { cwd: ROOT });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: 'from source' });
  });
});
