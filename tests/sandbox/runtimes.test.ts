/**
 * Every runtime a tool is written for works in the sandbox (issue 28): the echo example on
 * Node.js through tsx (Node 20), on each runtime of the matrix (Node 22/24/26 on the built
 * file, Bun and Deno on the source), as a single executable, and the Python fixture through
 * whatever python3 is (a pyenv shim here), each answering under `twylt call --sandbox`
 * exactly as without it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../build/singles.js';
import { HAS_PYTHON } from '../support/mcp.js';
import { ROOT } from '../support/process.js';
import { RUNTIME_NAMES, runtimeArgv, runtimeBinary, runtimeMissing } from '../support/runtimes.js';
import { runTwylt } from '../support/twylt-cli.js';
import { SANDBOX_SKIP_REASON } from './support.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-sandbox-runtimes-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const executable = join(scratch, 'echo');

/** `twylt call` on `command`, with and without --sandbox: both answers. */
async function both(command: string[]) {
  const args = ['call', '--json', '--input', '{"text": "hé"}', '--', ...command];
  const plain = await runTwylt(args, { cwd: ROOT });
  const boxed = await runTwylt(['call', '--sandbox', ...args.slice(1)], { cwd: ROOT });
  return { plain, boxed };
}

describe.skipIf(SANDBOX_SKIP_REASON !== undefined)(`runtimes in the sandbox${SANDBOX_SKIP_REASON ? ` (skipped: ${SANDBOX_SKIP_REASON})` : ''}`, () => {
  beforeAll(async () => {
    const result = await build(join(ROOT, 'examples/echo/tool.ts'), executable, ['--executable']);
    expect(result.code, result.stderr).toBe(0);
  }, 300_000);

  const cases: [string, string[], string | undefined][] = [
    ['Node.js 20 through tsx (node --import tsx)', [process.execPath, '--import', 'tsx', 'examples/echo/tool.ts'], undefined],
    ['a single executable (twylt build --executable)', [executable], undefined],
    ['Python (python3 as PATH finds it)', ['python3', 'tests/fixtures/python/echo_tool.py'], HAS_PYTHON ? undefined : 'python3 is not installed'],
    ...RUNTIME_NAMES.map((name): [string, string[], string | undefined] => [
      name,
      [...(runtimeBinary(name) ? runtimeArgv(name) : [name]), name.startsWith('node') ? 'build/examples/echo/tool.js' : 'examples/echo/tool.ts'],
      runtimeBinary(name) ? undefined : runtimeMissing(name),
    ]),
  ];
  for (const [name, command, missing] of cases) {
    it.skipIf(missing !== undefined)(`${name}${missing ? `: skipped, ${missing}` : ''}`, async () => {
      const { plain, boxed } = await both(command);
      expect(plain.code, plain.stderr).toBe(0);
      expect(boxed).toEqual(plain);
    }, 180_000);
  }
});
