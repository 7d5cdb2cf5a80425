/**
 * The one line that says why a tool crashed (exit 1, or another code TWYLT does not define),
 * as `UnexpectedExitError`'s message and `twylt check`'s start failure quote it: the line
 * naming the error, never Node's quoted source line nor a Python traceback's header.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UnexpectedExitError } from '../../packages/twylt/src/client/index.js';
import { NO_PYTHON_REASON, noPython, python } from '../support/python.js';
import { runTwylt } from '../support/twylt-cli.js';

const HEAD = 'tool exited with 1, which is not a TWYLT exit code (0, 2, 3, 4, 5, 6)';
/** What the message quotes from this stderr. */
const quoted = (stderr: string) => new UnexpectedExitError(['tool'], 1, { stdout: '', stderr }).message.slice(HEAD.length + 2);

const NODE_THROW = `[eval]:1
throw new Error("boom here")
^

Error: boom here
    at [eval]:1:7
    at runScriptInThisContext (node:internal/vm:209:10)

Node.js v20.20.2
`;

const NODE_MISSING_TSX = `node:internal/modules/esm/resolve:873
  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);
        ^

Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'tsx' imported from /work/bare/
    at packageResolve (node:internal/modules/esm/resolve:873:9)

Node.js v20.20.2
`;

const PYTHON_CHAINED = `Traceback (most recent call last):
  File "/x/tool.py", line 3, in <module>
    {}["k"]
KeyError: 'k'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/x/tool.py", line 5, in <module>
    raise ValueError("bad value")
ValueError: bad value
`;

describe('the line a crash message quotes', () => {
  it.each([
    ['a Node throw: the error, not the quoted source line', NODE_THROW, 'Error: boom here'],
    ['Node with an error code', 'file:///x/t.mjs:2\nfs.readFileSync(1n);\n   ^\n\nTypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string\n    at x\n', 'TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string'],
    ["node --import tsx without tsx: the package's name", NODE_MISSING_TSX, "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'tsx' imported from /work/bare/"],
    ['a Python traceback: its exception, not its header', 'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\nException: boom\n', 'Exception: boom'],
    ['a chained Python traceback: the last exception', PYTHON_CHAINED, 'ValueError: bad value'],
    ['a Python exception of any name', 'Traceback (most recent call last):\n  File "t.py", line 9, in <module>\n__main__.Refused: no\n', '__main__.Refused: no'],
    ["npm's first error line", 'npm error could not determine executable to run\nnpm error A complete log of this run can be found in: /x.log\n', 'npm error could not determine executable to run'],
    ['a qualified Python name outside a traceback', 'reading config\njson.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n', 'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)'],
    ['else an unindented line mentioning an error', 'starting\npanic: runtime error: index out of range [3]\n\ngoroutine 1 [running]:\n', 'panic: runtime error: index out of range [3]'],
    ['else the first line', 'something went wrong\nand more\n', 'something went wrong'],
  ])('%s', (_, stderr, line) => {
    expect(quoted(stderr)).toBe(line);
  });

  it('quotes nothing when stderr is empty', () => {
    expect(new UnexpectedExitError(['tool'], 1, { stdout: '', stderr: '' }).message).toBe(HEAD);
  });
});

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-reason-')));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The first line twylt call prints for a tool that crashes. */
async function callSays(command: string[]): Promise<string> {
  const run = await runTwylt(['call', '--input', '{}', '--', ...command], { cwd: scratch });
  expect(run.code).toBe(1);
  return run.stderr.split('\n', 1)[0]!;
}

describe('twylt call and twylt check on a real crash', () => {
  it('Node: twylt call quotes "Error: boom here"', async () => {
    expect(await callSays([process.execPath, '-e', 'throw new Error("boom here")'])).toBe(`UnexpectedExitError: ${HEAD}: Error: boom here`);
  });

  it('Node: twylt check says why the command did not start with the error and its first frame', async () => {
    const script = join(scratch, 'throws.cjs');
    writeFileSync(script, 'throw new Error("boom here");\n');
    const run = await runTwylt(['check', '--', process.execPath, script], { cwd: scratch });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/it said: "Error: boom here\\n {4}at Object\.<anonymous> \(.*throws\.cjs:1:7\)"\n$/);
  });

  it.skipIf(noPython)(`Python: twylt call quotes the traceback's last exception (${noPython ? NO_PYTHON_REASON : 'python3'})`, async () => {
    const chained = 'try:\n  {}["k"]\nexcept KeyError:\n  raise ValueError("bad value")\n';
    expect(await callSays([python!, '-c', chained])).toBe(`UnexpectedExitError: ${HEAD}: ValueError: bad value`);
    expect(await callSays([python!, '-c', 'raise Exception("boom")'])).toBe(`UnexpectedExitError: ${HEAD}: Exception: boom`);
  });
});
