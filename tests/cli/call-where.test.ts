/**
 * A call runs the command as typed where the caller stands (issue 17), the file transport
 * too, although the tool then works in an exchange directory of its own: that directory is
 * made inside the caller's, so npx and `node --import tsx` find the project's tsx, and a
 * relative script path is resolved from the caller's directory first. A project without
 * tsx gets Node's own words for it, the package name included.
 *
 * The project is a temporary folder outside the repository with tsx in its own
 * node_modules; npm is offline with an empty cache, so nothing else can answer for it.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TwyltClient, UnexpectedExitError } from '../../packages/twylt/src/client/index.js';
import { useTsProject } from '../support/ts-project.js';
import { runTwylt } from '../support/twylt-cli.js';

const { scratch, npm: NPM_ISOLATED, project } = useTsProject('twylt-call-where-');
const INPUT = '{"text": "hi"}';
/** Exchange directories left in `dir`. */
const leftovers = (dir: string) => readdirSync(dir).filter((name) => name.startsWith('.twylt-call-'));

describe('a TypeScript tool run through tsx, over the file transport', () => {
  it('twylt call --transport file -- npx tsx tools/run.ts', async () => {
    const run = await runTwylt(['call', '--transport', 'file', '--input', INPUT, '--', 'npx', 'tsx', 'tools/run.ts'], { cwd: project, env: NPM_ISOLATED });
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(JSON.parse(run.stdout)).toEqual({ text: 'hi' });
    expect(leftovers(project)).toEqual([]);
  }, 120_000);

  it('twylt call --transport file -- node --import tsx tools/run.ts', async () => {
    const run = await runTwylt(['call', '--transport', 'file', '--input', INPUT, '--', 'node', '--import', 'tsx', 'tools/run.ts'], { cwd: project });
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(JSON.parse(run.stdout)).toEqual({ text: 'hi' });
  }, 120_000);

  it("the client's file transport with a relative command (npx tsx tools/run.ts, cwd the project)", async () => {
    const client = new TwyltClient(['npx', 'tsx', 'tools/run.ts'], { cwd: project, env: NPM_ISOLATED, timeoutMs: 60_000 });
    const { output, transport } = await client.call({ text: 'hi' }, { transport: 'file' });
    expect([transport, output]).toEqual(['file', { text: 'hi' }]);
    expect(leftovers(project)).toEqual([]);
  }, 120_000);
});

describe('node --import tsx where no tsx is installed', () => {
  it("the failure names the missing package, in the client's message and in twylt call's", async () => {
    const bare = join(scratch, 'bare');
    mkdirSync(bare);
    const command = ['node', '--import', 'tsx', 'tool.ts'];
    const error = await new TwyltClient(command, { cwd: bare }).call({}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnexpectedExitError);
    expect((error as UnexpectedExitError).message).toMatch(/^tool exited with 1, which is not a TWYLT exit code \(0, 2, 3, 4, 5, 6\): Error \[ERR_MODULE_NOT_FOUND\]: Cannot find package 'tsx' imported from /);

    const run = await runTwylt(['call', '--json', '--input', '{}', '--', ...command], { cwd: bare });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr).client_error.message).toContain("Cannot find package 'tsx'");
    const human = await runTwylt(['call', '--input', '{}', '--', ...command], { cwd: bare });
    expect(human.stderr.split('\n', 1)[0]).toContain("Cannot find package 'tsx'");
  }, 60_000);
});
