/**
 * twylt-ai with the newest `ai` major (7) and the OpenAI Agents SDK release that needs
 * Node 22, run by Node 22 or later: vitest itself runs on Node 20 here, so a script
 * (fixtures/newer-libraries.mjs) runs under the newer Node in a project of its own whose
 * node_modules maps `ai` and `@openai/agents` to the aliased devDependencies `ai-7` and
 * `openai-agents`, with twylt-ai copied in so that its own `import 'ai'` finds ai 7.
 * ai 6 stays tested by the other files of this folder.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLEEPER, isRunning, waitFor } from '../support/mcp.js';
import { ROOT, run } from '../support/process.js';
import { runtimeBinary, runtimeMissing } from '../support/runtimes.js';
import { ABORT_WITHIN_MS, BOOKING } from './support.js';

const runtime = ['node24', 'node22', 'node26'].find((name) => runtimeBinary(name) !== undefined);
const node = runtime === undefined ? undefined : runtimeBinary(runtime);
const project = mkdtempSync(join(tmpdir(), 'twylt-ai-newer-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

const pinned = (alias: string) => (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies[alias]!.split('@').at(-1);

// Tool commands run by the script: the fixtures, with the Node 20 that runs the suite.
let report: Record<string, any>;
beforeAll(async () => {
  if (node === undefined) return;
  const modules = join(project, 'node_modules');
  mkdirSync(join(modules, '@openai'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules/ai-7'), join(modules, 'ai'));
  symlinkSync(join(ROOT, 'node_modules/openai-agents'), join(modules, '@openai/agents'));
  symlinkSync(join(ROOT, 'packages/twylt'), join(modules, 'twylt'));
  mkdirSync(join(modules, 'twylt-ai'));
  cpSync(join(ROOT, 'packages/twylt-ai/package.json'), join(modules, 'twylt-ai/package.json'));
  cpSync(join(ROOT, 'packages/twylt-ai/dist'), join(modules, 'twylt-ai/dist'), { recursive: true });
  cpSync(join(ROOT, 'tests/ai/fixtures/newer-libraries.mjs'), join(project, 'newer-libraries.mjs'));
  const scratch = join(project, 'scratch');
  mkdirSync(scratch);
  const result = await run([node, join(project, 'newer-libraries.mjs'), JSON.stringify(BOOKING), JSON.stringify(SLEEPER), JSON.stringify(scratch)], { cwd: project, timeoutMs: 120_000 });
  expect(result.code, result.stderr).toBe(0);
  report = JSON.parse(result.stdout);
}, 180_000);

describe.skipIf(node === undefined)(`twylt-ai with ai 7 and @openai/agents, on ${runtime ?? 'Node 22 or later'}${node ? '' : ` (skipped: ${runtimeMissing('node24')})`}`, () => {
  it('ran the pinned releases, on Node 22 or later', () => {
    expect(Number(report.node.split('.')[0])).toBeGreaterThanOrEqual(22);
    expect(report.ai).toBe(pinned('ai-7'));
    expect(report.agentsVersion).toBe(pinned('openai-agents'));
  });

  it('ai 7: an invalid call and a rejected one reach the model as tool errors naming each issue; the corrected call runs', () => {
    // ai 7 names the error classes in the text (ai 6: `Invalid input for tool ...: Type validation failed: ...`).
    const expected =
      'AI_InvalidToolInputError: Invalid input for tool book_room: AI_TypeValidationError: Type validation failed: Value: {"from":"soon"}.\n' +
      'Error message: Error: the arguments break the inputSchema of "book_room":\n- /: misses required property "to"\n- /from: must match the pattern /^\\d{4}-\\d{2}-\\d{2}$/ (got "soon")';
    expect(report.aiToolError).toBe(expected);
    expect(report.aiInvalid).toEqual([{ type: 'error-text', value: expected }]);
    // A failure thrown by execute: ai 7 hands the model `error.toString()`, ai 6 `error.message`.
    expect(report.aiRejected).toEqual({ type: 'error-text', value: 'TwyltCallError: "book_room" rejected its arguments. Correct them and call it again:\n- to: Must be after "from"' });
    expect(report.aiValid).toEqual({ type: 'text', value: '{"booking":"B-2030-02-01","nights":2}' });
    expect(report.aiText).toBe('Booked.');
  });

  it('ai 7: aborting the generation rejects at once and kills the tool process', async () => {
    expect(report.aiAbort).toBe('the user left');
    expect(report.aiAbortMs).toBeLessThan(ABORT_WITHIN_MS);
    await waitFor(() => !isRunning(report.aiAbortPid), `the sleeper (pid ${report.aiAbortPid}) to be killed`, 5_000);
  });

  it('the OpenAI Agents SDK: the exact JSON text, and the reasons of an invalid and a failed call', () => {
    expect(report.agentsValid).toBe('{"booking":"B-2030-02-01","nights":2}');
    expect(report.agentsInvalid).toBe(
      'Invalid arguments for "book_room" (checked against its inputSchema; the tool was not run). Correct them and call it again:\n' +
        '- /: misses required property "to"\n- /from: must match the pattern /^\\d{4}-\\d{2}-\\d{2}$/ (got "soon")',
    );
    expect(report.agentsFailed).toBe('"book_room" failed: FullyBooked: no room is free on the night of 2030-01-01');
  });
});
