/**
 * twylt-ai in a real AI SDK agent loop: `generateText` with `stopWhen`, the SDK's own mock
 * model (no network) and real tool processes. Each test reads what the model was sent in
 * the next step, which is what a real provider would have received.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText, stepCountIs, streamText } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { twyltTools, TwyltCallError } from 'twylt-ai';
import { SLEEPER, isRunning, sleeperPid, waitFor } from '../support/mcp.js';
import { example } from '../support/process.js';
import { NO_PYTHON_REASON, noPython, pythonTool } from '../support/python.js';
import { ABORT_WITHIN_MS, BOOKING, answer, callTools, scriptedModel, scriptedStreamingModel, toolResultsIn } from './support.js';

const dirs: string[] = [];
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'twylt-ai-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  // Releases any sleeper a failed test left waiting.
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(noPython)(`a multi-step generateText loop over a Python and a TypeScript tool (${noPython ? NO_PYTHON_REASON : 'python3'})`, () => {
  it('runs both tools and hands each result to the model in the next step', async () => {
    const tools = await twyltTools([pythonTool(), { command: example('echo'), name: 'echo_ts' }]);
    const model = scriptedModel(
      callTools(['py_echo', { text: 'ab', times: 2, case: 'upper' }]),
      callTools(['echo_ts', { text: 'ABAB twice' }]),
      answer('The Python tool said ABAB, the TypeScript one ABAB twice.'),
    );

    const result = await generateText({ model, tools, stopWhen: stepCountIs(5), prompt: 'Repeat "ab" twice in upper case, then echo it.' });

    expect(result.steps).toHaveLength(3);
    expect(result.text).toBe('The Python tool said ABAB, the TypeScript one ABAB twice.');
    // Step 1 offered both tools with their published descriptions and schemas.
    const offered = model.doGenerateCalls[0]!.tools!;
    expect(offered.map((tool) => tool.name)).toEqual(['py_echo', 'echo_ts']);
    expect(offered[0]).toMatchObject({
      type: 'function',
      description: 'Repeat a text, optionally decorated. A hand-written TWYLT tool in plain Python.',
      inputSchema: { type: 'object', required: ['text'], additionalProperties: false },
    });
    // Step 2's prompt holds the Python tool's result, step 3's the TypeScript tool's too.
    expect(toolResultsIn(model.doGenerateCalls[1]!.prompt)).toEqual([
      { toolName: 'py_echo', output: { type: 'text', value: '{"echo":"ABAB","length":4,"scale":1}' } },
    ]);
    expect(toolResultsIn(model.doGenerateCalls[2]!.prompt)).toEqual([
      { toolName: 'py_echo', output: { type: 'text', value: '{"echo":"ABAB","length":4,"scale":1}' } },
      { toolName: 'echo_ts', output: { type: 'text', value: '{"text":"ABAB twice"}' } },
    ]);
    // The program gets the parsed outputs.
    expect(result.steps[0]!.toolResults.map((part) => part.output)).toEqual([{ echo: 'ABAB', length: 4, scale: 1 }]);
    expect(result.steps[1]!.toolResults.map((part) => part.output)).toEqual([{ text: 'ABAB twice' }]);
  });

  it('runs two calls of one step concurrently, both results in the next prompt', async () => {
    const tools = await twyltTools([pythonTool(), { command: example('echo'), name: 'echo_ts' }]);
    const model = scriptedModel(callTools(['py_echo', { text: 'x' }], ['echo_ts', { text: 'y' }]), answer('done'));

    await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'Echo x and y.' });

    expect(toolResultsIn(model.doGenerateCalls[1]!.prompt).map((part) => part.output.value)).toEqual(['{"echo":"x","length":1,"scale":1}', '{"text":"y"}']);
  });

  it('an invalid call reaches the model as a tool error naming each issue; the corrected call succeeds', async () => {
    const tools = await twyltTools([pythonTool()]);
    const model = scriptedModel(
      callTools(['py_echo', { text: '', times: 9, colour: 'red' }]),
      callTools(['py_echo', { text: 'hi', times: 2 }]),
      answer('hihi'),
    );

    const result = await generateText({ model, tools, stopWhen: stepCountIs(5), prompt: 'Say hi twice.' });

    // Step 1: the SDK checked the arguments (the client's Ajv check) and did not run the tool.
    const [error] = toolResultsIn(model.doGenerateCalls[1]!.prompt);
    expect(error!.output.type).toBe('error-text');
    const message = error!.output.value as string;
    expect(message).toContain('Invalid input for tool py_echo');
    expect(message).toContain('the arguments break the inputSchema of "py_echo"');
    expect(message).toContain('- /text: must have at least 1 character (it has 0)');
    expect(message).toContain('- /times: must be at most 5 (got 9)');
    expect(message).toContain('- /: has unknown property "colour"; the properties are "text", "times", "case", "scale", "shout", "decor", "path"');
    expect(result.steps[0]!.content.find((part) => part.type === 'tool-error')).toBeDefined();
    // Step 2: the corrected call ran, and its result reached the model.
    expect(toolResultsIn(model.doGenerateCalls[2]!.prompt).at(-1)).toEqual({
      toolName: 'py_echo',
      output: { type: 'text', value: '{"echo":"hihi","length":4,"scale":1}' },
    });
    expect(result.text).toBe('hihi');
  });

  it("a business failure (exit 5) reaches the model with the tool's own message", async () => {
    const tools = await twyltTools([pythonTool()]);
    const model = scriptedModel(callTools(['py_echo', { text: 'x', path: '/nonexistent/twylt-ai.txt' }]), answer('The file is missing.'));

    const result = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'Echo the file.' });

    const [error] = toolResultsIn(model.doGenerateCalls[1]!.prompt);
    expect(error!.output).toEqual({
      type: 'error-text',
      value: `"py_echo" failed: FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/twylt-ai.txt'`,
    });
    const part = result.steps[0]!.content.find((content) => content.type === 'tool-error');
    expect(part).toMatchObject({ type: 'tool-error', toolName: 'py_echo' });
    // The program gets the typed error: its kind, and the client's error as its cause.
    const thrown = (part as { error: unknown }).error;
    expect(thrown).toBeInstanceOf(TwyltCallError);
    expect(thrown).toMatchObject({ kind: 'failed', toolName: 'py_echo', cause: { exitCode: 5, stage: 'biz' } });
  });
});

describe('failures the model can act on, in the loop', () => {
  it("the tool's own validation failure (exit 2) names each issue; the corrected call succeeds", async () => {
    const tools = await twyltTools([BOOKING]);
    const model = scriptedModel(
      // Valid for the JSON Schema: only the tool knows that departure must follow arrival.
      callTools(['book_room', { from: '2030-02-03', to: '2030-02-01' }]),
      callTools(['book_room', { from: '2030-02-01', to: '2030-02-03' }]),
      answer('Booked.'),
    );

    await generateText({ model, tools, stopWhen: stepCountIs(5), prompt: 'Book 1 to 3 February 2030.' });

    expect(toolResultsIn(model.doGenerateCalls[1]!.prompt)).toEqual([
      { toolName: 'book_room', output: { type: 'error-text', value: '"book_room" rejected its arguments. Correct them and call it again:\n- to: Must be after "from"' } },
    ]);
    expect(toolResultsIn(model.doGenerateCalls[2]!.prompt).at(-1)).toEqual({
      toolName: 'book_room',
      output: { type: 'text', value: '{"booking":"B-2030-02-01","nights":2}' },
    });
  });

  it('a hanging tool times out after the entry’s timeoutMs, and the model is told so', async () => {
    const dir = scratch();
    const pidFile = join(dir, 'pid');
    const tools = await twyltTools([{ command: SLEEPER, timeoutMs: 3_000 }]);
    const model = scriptedModel(callTools(['sleeper', { action: 'wait', pid_file: pidFile, release_file: join(dir, 'never') }]), answer('It timed out.'));

    const started = Date.now();
    await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'Wait.' });

    expect(Date.now() - started).toBeLessThan(20_000);
    expect(toolResultsIn(model.doGenerateCalls[1]!.prompt)).toEqual([
      { toolName: 'sleeper', output: { type: 'error-text', value: '"sleeper" timed out: it did not finish within 3000 ms and was stopped.' } },
    ]);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => !isRunning(pid), `the timed-out sleeper (pid ${pid}) to be gone`, 5_000);
  });

  it('aborting the generation kills the tool process', async () => {
    const dir = scratch();
    const pidFile = join(dir, 'pid');
    const tools = await twyltTools([SLEEPER]);
    const model = scriptedModel(callTools(['sleeper', { action: 'wait', pid_file: pidFile, release_file: join(dir, 'never') }]), answer('unreachable'));
    const controller = new AbortController();

    const generation = generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'Wait.', abortSignal: controller.signal });
    const pid = await sleeperPid(pidFile);
    expect(isRunning(pid)).toBe(true);
    controller.abort(new Error('the user left'));
    const aborted = Date.now();

    await expect(generation).rejects.toThrow('the user left');
    // Within seconds of abort(): a dropped signal would leave the sleeper to the 30 s default
    // time-out, and the generation would reject only after that.
    expect(Date.now() - aborted).toBeLessThan(ABORT_WITHIN_MS);
    await waitFor(() => !isRunning(pid), `the sleeper (pid ${pid}) to be killed`, 5_000);
    // The model was never asked for a second step.
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it('a crashing tool is reported as a fault of the tool, with its signal', async () => {
    const tools = await twyltTools([SLEEPER]);
    const model = scriptedModel(callTools(['sleeper', { action: 'crash' }]), answer('It crashed.'));

    await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'Crash.' });

    const [error] = toolResultsIn(model.doGenerateCalls[1]!.prompt);
    expect(error!.output.type).toBe('error-text');
    expect(error!.output.value).toBe('"sleeper" crashed: it was killed by SIGTERM.');
  });
});

describe('streamText, as a chat server runs it', () => {
  it("the loop hands results and failures to the model; a UI stream masks the failure unless told to show TwyltCallError's message", async () => {
    const tools = await twyltTools([BOOKING]);
    const run = (model: ReturnType<typeof scriptedStreamingModel>, onError?: (error: unknown) => string) => {
      const result = streamText({ model, tools, stopWhen: stepCountIs(4), prompt: 'Book 1 to 3 February 2030.' });
      return result.toUIMessageStream(onError ? { onError } : {});
    };
    const steps = () => [
      callTools(['book_room', { from: '2030-02-03', to: '2030-02-01' }]),
      callTools(['book_room', { from: '2030-02-01', to: '2030-02-03' }]),
      answer('Booked: B-2030-02-01.'),
    ];

    const model = scriptedStreamingModel(...steps());
    const chunks: { type: string; errorText?: string; output?: unknown }[] = [];
    for await (const chunk of run(model)) chunks.push(chunk);

    // The model itself read the real message and the later result, step by step.
    expect(toolResultsIn(model.doStreamCalls[1]!.prompt)[0]!.output).toEqual({
      type: 'error-text',
      value: '"book_room" rejected its arguments. Correct them and call it again:\n- to: Must be after "from"',
    });
    expect(toolResultsIn(model.doStreamCalls[2]!.prompt)[1]!.output).toEqual({ type: 'text', value: '{"booking":"B-2030-02-01","nights":2}' });
    // The UI stream (and so the chat history a client sends back) says only "An error occurred." by default...
    expect(chunks.find((chunk) => chunk.type === 'tool-output-error')!.errorText).toBe('An error occurred.');
    expect(chunks.find((chunk) => chunk.type === 'tool-output-available')!.output).toEqual({ booking: 'B-2030-02-01', nights: 2 });

    // ...and the tool's message with an onError that passes TwyltCallError's through.
    const shown: typeof chunks = [];
    for await (const chunk of run(scriptedStreamingModel(...steps()), (error) => (error instanceof TwyltCallError ? error.message : 'An error occurred.'))) shown.push(chunk);
    expect(shown.find((chunk) => chunk.type === 'tool-output-error')!.errorText).toBe('"book_room" rejected its arguments. Correct them and call it again:\n- to: Must be after "from"');
  });
});
