/**
 * twylt-ai's tool sets: what each AI SDK tool carries, the start-up checks, describeOnce,
 * transports, exact numbers, and the message of every kind of failure. Real tool
 * processes throughout.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asSchema, generateText, stepCountIs, type ModelMessage } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { JsonNumber, SpawnError } from 'twylt/client';
import { SpecCache, ToolsetError, TwyltCallError, describeForAgents, readConfig, twyltTool, twyltTools, type TwyltAiTool } from 'twylt-ai';
import { SLEEPER } from '../support/mcp.js';
import { ROOT, example, fixture } from '../support/process.js';
import { NO_PYTHON_REASON, noPython, pythonNumbersTool, pythonTool } from '../support/python.js';
import { BOOKING, answer, callTools, scriptedModel, toolResultsIn } from './support.js';

const FAULTY = [process.execPath, `${ROOT}tests/ai/fixtures/faulty.mjs`];
const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-ai-tools-')));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Run a tool's execute as the SDK does, outside a loop. */
function execute(tool: TwyltAiTool, input: Record<string, unknown>, abortSignal?: AbortSignal): Promise<unknown> {
  return Promise.resolve(tool.execute!(input, { toolCallId: 'call-1', messages: [], abortSignal }) as Promise<unknown>);
}

/** The TwyltCallError a call rejects with. */
async function failureOf(tool: TwyltAiTool, input: Record<string, unknown>): Promise<TwyltCallError> {
  const error = await execute(tool, input).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(TwyltCallError);
  return error as TwyltCallError;
}

describe('a tool set', () => {
  it('keys each tool by its published name and carries its description, schemas and examples', async () => {
    const tools = await twyltTools([BOOKING, example('echo')]);
    expect(Object.keys(tools)).toEqual(['book_room', 'echo']);
    const booking = tools.book_room!;
    expect(booking.type).toBe('dynamic');
    expect(booking.description).toBe('Book a hotel room from one date to the day of departure.');
    expect(await asSchema(booking.inputSchema).jsonSchema).toMatchObject({
      type: 'object',
      properties: { from: { type: 'string', description: 'First night' }, to: { type: 'string' } },
      required: ['from', 'to'],
    });
    expect(await asSchema(booking.outputSchema).jsonSchema).toMatchObject({ required: ['booking', 'nights'] });
    expect(booking.inputExamples).toEqual([{ input: { from: '2030-02-01', to: '2030-02-03' } }]);
  });

  it('serves a tool under its entry’s name', async () => {
    const tools = await twyltTools([{ command: example('echo'), name: 'echo_ts' }]);
    expect(Object.keys(tools)).toEqual(['echo_ts']);
    await expect(execute(tools.echo_ts!, { text: 'hi' })).resolves.toEqual({ text: 'hi' });
  });

  it('reads a config file’s entries with readConfig, paths relative to the file', async () => {
    const file = join(scratch, 'tools.json');
    writeFileSync(file, JSON.stringify({ tools: [{ command: [process.execPath, `${ROOT}tests/ai/fixtures/booking.mjs`], name: 'book' }] }));
    const tools = await twyltTools(await readConfig(file));
    await expect(execute(tools.book!, { from: '2030-03-01', to: '2030-03-04' })).resolves.toEqual({ booking: 'B-2030-03-01', nights: 3 });
  });

  it('twyltTool gives one tool, to be keyed as the caller likes', async () => {
    const tool = await twyltTool(BOOKING);
    expect(tool.description).toBe('Book a hotel room from one date to the day of departure.');
    await expect(execute(tool, { from: '2030-02-01', to: '2030-02-02' })).resolves.toEqual({ booking: 'B-2030-02-01', nights: 1 });
  });
});

describe('start-up checks', () => {
  it('a name providers reject is an error naming the command, with the "name" option as the fix', async () => {
    const error = await twyltTools([{ command: example('echo'), name: 'echo tool!' }]).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ToolsetError);
    expect((error as ToolsetError).problems).toEqual([
      `cannot serve "echo tool!" (${example('echo').join(' ')}): model providers accept only tool names of 1 to 64 letters, digits, "_" and "-"; ` +
        'give it another name with "name" in its entry, e.g. { command: [...], name: "my_tool" }',
    ]);
  });

  it('a name longer than 64 characters is refused too', async () => {
    await expect(twyltTools([{ command: example('echo'), name: 'x'.repeat(65) }])).rejects.toThrow('model providers accept only tool names of 1 to 64');
  });

  it('two tools with one name are an error naming both commands', async () => {
    const error = await twyltTools([example('echo'), { command: example('echo_json_schema'), name: 'echo' }]).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ToolsetError);
    expect((error as Error).message).toBe(
      `2 tools are named "echo": ${example('echo').join(' ')} and ${example('echo_json_schema').join(' ')}; ` +
        'rename all but one with "name" in its entry, e.g. { command: [...], name: "my_tool" }',
    );
  });

  it('every tool that cannot be described is named, each by its command', async () => {
    const error = await twyltTools([example('echo'), ['/nonexistent/twylt-tool'], [process.execPath, '-e', 'process.exit(1)']]).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ToolsetError);
    const problems = (error as ToolsetError).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^cannot describe tool \(\/nonexistent\/twylt-tool\): cannot run \/nonexistent\/twylt-tool: spawn .* ENOENT/);
    expect(problems[1]).toContain(`cannot describe tool (${process.execPath} -e "process.exit(1)"): tool exited with 1`);
  });

  it('with onUndescribed, a tool that cannot be described is left out and reported; the others are served', async () => {
    const problems: string[] = [];
    const tools = await twyltTools([example('echo'), ['/nonexistent/twylt-tool']], { onUndescribed: (problem) => problems.push(problem) });
    expect(Object.keys(tools)).toEqual(['echo']);
    expect(problems).toEqual([expect.stringMatching(/^cannot describe tool \(\/nonexistent\/twylt-tool\): cannot run/)]);
  });

  it('an inputSchema that is not valid JSON Schema is a start-up error, not a surprise at the first call', async () => {
    const error = await twyltTools([{ command: FAULTY, env: { FAULTY_SCHEMA: 'broken' } }]).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ToolsetError);
    expect((error as Error).message).toMatch(/^cannot serve "faulty" \(.*faulty\.mjs\): its inputSchema is not usable JSON Schema: schema is invalid: .*type/);
  });

  it('an inputSchema of another type than object is a start-up error; one without a type is served as an object', async () => {
    await expect(twyltTools([{ command: FAULTY, env: { FAULTY_SCHEMA: 'array' } }])).rejects.toThrow(
      /^cannot serve "faulty" \(.*\): its inputSchema has type "array"; model providers take arguments as an object$/,
    );
    const { faulty } = await twyltTools([{ command: FAULTY, env: { FAULTY_SCHEMA: 'typeless' } }]);
    expect(await asSchema(faulty!.inputSchema).jsonSchema).toMatchObject({ type: 'object', required: ['fault'] });
  });

  it('twyltTool does not judge the published name: the caller picks the key', async () => {
    await expect(twyltTool({ command: example('echo'), name: 'echo tool!' })).resolves.toBeDefined();
  });
});

describe('describeOnce', () => {
  it('with a shared SpecCache, tool sets built again and again describe each tool once', async () => {
    const log = join(scratch, 'describe-once.log');
    writeFileSync(log, '');
    const entry = { command: SLEEPER, env: { SLEEPER_LOG: log } };
    const describeOnce = new SpecCache();

    // One set per request, some at the same time, as a server would build them.
    await Promise.all([twyltTools([entry], { describeOnce }), twyltTools([entry], { describeOnce })]);
    const sets = [await twyltTools([entry], { describeOnce }), await twyltTools([entry], { describeOnce })];
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);

    // Calls still start the tool, one process each.
    await execute(sets[1]!.sleeper!, { action: 'wait' });
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('without it, each tool set describes its tools again', async () => {
    const log = join(scratch, 'describe-each.log');
    writeFileSync(log, '');
    const entry = { command: SLEEPER, env: { SLEEPER_LOG: log } };
    await twyltTools([entry]);
    await twyltTools([entry]);
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(2);
  });
});

describe('transports', () => {
  it('sends an input too large for one argument on stdin', async () => {
    const { echo } = await twyltTools([example('echo')]);
    const text = 'x'.repeat(150_000);
    await expect(execute(echo!, { text })).resolves.toEqual({ text });
    // The same input as the CLI argument, forced by the entry, cannot even be started (the
    // client's SpawnError, for the E2BIG that spawn throws).
    const { echo: cli } = await twyltTools([{ command: example('echo'), transport: 'cli' }]);
    const error = await failureOf(cli!, { text });
    expect(error.kind).toBe('broken');
    expect(error.message).toMatch(/^"echo" could not be started: cannot run .*: spawn E2BIG$/);
    expect(error.cause).toBeInstanceOf(SpawnError);
  });

  it.skipIf(noPython)(`uses the transport of the entry: file (${noPython ? NO_PYTHON_REASON : 'python3'})`, async () => {
    const { py_echo: tool } = await twyltTools([{ command: pythonTool(), transport: 'file' }]);
    await expect(execute(tool!, { text: 'file' })).resolves.toEqual({ echo: 'file', length: 4, scale: 1 });
  });
});

describe.skipIf(noPython)(`exact numbers (${noPython ? NO_PYTHON_REASON : 'python3'})`, () => {
  const digits =
    '"modified_ns":1796084204906049009,"negative":-1796084204906049009,"beyond_64_bits":123456789012345678901234567890,' +
    '"tenth":0.1,"tiny":1e-07,"whole":1.0,"large":1e+16,"third":0.3333333333333333,"small_int":42';

  it('the program gets values, the model the tool’s own digits, also when the messages are sent again', async () => {
    const tools = await twyltTools([pythonNumbersTool()]);
    const model = scriptedModel(callTools(['py_numbers', { n: 0.5 }]), answer('noted'), answer('still noted'));

    const first = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'Numbers, please.' });

    const output = first.steps[0]!.toolResults[0]!.output as Record<string, unknown>;
    expect(output.modified_ns).toBeInstanceOf(JsonNumber);
    expect(String(output.modified_ns)).toBe('1796084204906049009');
    expect(output.whole).toBe(1);
    const sent = { toolName: 'py_numbers', output: { type: 'text', value: `{"echo":0.5,${digits}}` } };
    expect(toolResultsIn(model.doGenerateCalls[1]!.prompt)).toEqual([sent]);

    // A chat sends the conversation again with its next turn; the SDK checks those messages.
    const messages: ModelMessage[] = [{ role: 'user', content: 'Numbers, please.' }, ...first.response.messages, { role: 'user', content: 'And again?' }];
    await generateText({ model, tools, messages });
    expect(toolResultsIn(model.doGenerateCalls[2]!.prompt)).toEqual([sent]);
  });
});

describe('what the model is told when a call fails', () => {
  it('the tool was not run: arguments that break the inputSchema, when execute is called directly', async () => {
    const { book_room: tool } = await twyltTools([BOOKING]);
    const error = await failureOf(tool!, { from: 'soon' });
    expect(error.kind).toBe('invalid_input');
    expect(error.message).toBe(
      'Invalid arguments for "book_room" (checked against its inputSchema; the tool was not run). Correct them and call it again:\n' +
        '- /: misses required property "to"\n' +
        '- /from: must match the pattern /^\\d{4}-\\d{2}-\\d{2}$/ (got "soon")',
    );
  });

  it.skipIf(noPython)(`"describe" in the arguments is refused, even where the schema allows it (${noPython ? NO_PYTHON_REASON : 'python3'})`, async () => {
    // This variant's inputSchema lacks additionalProperties: false.
    const tool = await twyltTool(pythonTool('open_contract'));
    const error = await failureOf(tool, { text: 'x', describe: 'json_spec' });
    expect(error.kind).toBe('invalid_input');
    expect(error.message).toContain('- /describe: is reserved by TWYLT for describe requests');
  });

  it('a business failure (exit 5) gives the tool’s own message', async () => {
    const { book_room: tool } = await twyltTools([BOOKING]);
    const error = await failureOf(tool!, { from: '2029-12-30', to: '2030-01-02' });
    expect([error.kind, error.message]).toEqual(['failed', '"book_room" failed: FullyBooked: no room is free on the night of 2030-01-01']);
  });

  it('a guardrails denial (exit 6) says so, with the deny code', async () => {
    const workspace = join(scratch, 'workspace');
    const runs = join(scratch, 'runs');
    for (const dir of [workspace, runs]) mkdirSync(dir);
    const env = { TWYLT_GUARDRAILS: '1', TWYLT_WORKSPACE_ROOT: workspace, TWYLT_ALLOWED_CWD: runs };
    const { list_directory: tool } = await twyltTools([{ command: example('list_directory'), cwd: runs, env }]);
    const error = await failureOf(tool!, { path: '../../etc' });
    expect(error.kind).toBe('denied');
    expect(error.message).toMatch(/^"list_directory" was denied by its guardrails policy \(path_outside_workspace\): WorkspaceDenied: /);
  });

  it('a time-out says how long the tool had', async () => {
    // The entry's time-out bounds the start-up describe too: long enough for a loaded machine.
    const { sleeper } = await twyltTools([{ command: SLEEPER, timeoutMs: 3000 }]);
    const error = await failureOf(sleeper!, { action: 'wait', seconds: 30 });
    expect([error.kind, error.message]).toEqual(['timeout', '"sleeper" timed out: it did not finish within 3000 ms and was stopped.']);
  });

  it('an abort says the call was cancelled', async () => {
    const { sleeper } = await twyltTools([SLEEPER]);
    const controller = new AbortController();
    const call = execute(sleeper!, { action: 'wait', seconds: 30 }, controller.signal);
    setTimeout(() => controller.abort(), 200);
    const error = (await call.then(() => undefined, (thrown: unknown) => thrown)) as TwyltCallError;
    expect(error).toBeInstanceOf(TwyltCallError);
    expect([error.kind, error.message]).toEqual(['cancelled', '"sleeper" was cancelled before it finished.']);
  });

  it('too much output says how much was allowed', async () => {
    const { echo } = await twyltTools([{ command: example('echo'), maxOutputBytes: 5_000 }]);
    const error = await failureOf(echo!, { text: 'y'.repeat(10_000) });
    expect([error.kind, error.message]).toEqual(['broken', '"echo" wrote more than 5000 bytes to its stdout and was stopped.']);
  });

  it('an integer its runtime cannot hold exactly is invalid input, in the tool’s words', async () => {
    const { behaviours } = await twyltTools([fixture('behaviours')]);
    const error = await failureOf(behaviours!, { action: 'ok', size: new JsonNumber('9007199254740993') });
    expect(error.kind).toBe('invalid_input');
    expect(error.message).toMatch(
      /^"behaviours" cannot read its arguments as they are\. Change them and call it again: InexactInteger: The JSON on the command-line argument has the integer 9007199254740993 at size, /,
    );
  });

  it.each([
    ['garbage', /^"faulty" broke the TWYLT protocol: tool succeeded but its stdout is not JSON: /],
    ['exit7', /^"faulty" broke the TWYLT protocol: tool exited with 7, which is not a TWYLT exit code .*\nIts stderr:\nTraceback \(most recent call last\):\n {2}File "tool", line 1\nRuntimeError: boom$/],
    ['bad_output', /^"faulty" returned output that does not match its published outputSchema:\n- \/ok: must be a boolean \(got "yes"\)$/],
    ['output_issue', /^"faulty" produced output that breaks its own outputSchema \(a fault of the tool, not of the arguments\):\n- ok: Expected a boolean$/],
    ['unreadable', /^"faulty" broke the TWYLT protocol: it could not read its input \(exit 4\): JSONDecodeError: Expecting value/],
  ])('a tool that breaks its contract (%s) is reported as its fault', async (fault, message) => {
    const { faulty } = await twyltTools([FAULTY]);
    const error = await failureOf(faulty!, { fault });
    expect(error.kind).toBe('broken');
    expect(error.message).toMatch(message);
  });
});

describe('describeForAgents, the framework-neutral view', () => {
  it('gives name, description, JSON Schemas, examples, a check and a run with the exact text', async () => {
    const [tool] = await describeForAgents([BOOKING]);
    expect(tool).toMatchObject({ name: 'book_room', description: 'Book a hotel room from one date to the day of departure.', examples: [{ from: '2030-02-01', to: '2030-02-03' }] });
    expect(tool!.parameters).toMatchObject({ required: ['from', 'to'] });
    expect(tool!.check({ from: '2030-01-01' })).toEqual([{ path: '', message: 'misses required property "to"', keyword: 'required' }]);
    await expect(tool!.run({ from: '2030-02-01', to: '2030-02-05' })).resolves.toEqual({
      output: { booking: 'B-2030-02-01', nights: 4 },
      text: '{"booking":"B-2030-02-01","nights":4}',
    });
  });
});
