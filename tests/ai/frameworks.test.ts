/**
 * The same TWYLT tools in two other agent frameworks, wrapped exactly as docs/ai-sdk.md
 * shows: LangChain.js (@langchain/core `tool` with a JSON Schema) and the OpenAI Agents SDK
 * (`tool` of @openai/agents-core, which @openai/agents re-exports). Each framework runs the
 * tool as its agents would: through its own `invoke`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolMessage } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import { RunContext, tool as openaiTool } from '@openai/agents-core';
import { afterAll, describe, expect, it } from 'vitest';
import { describeForAgents, type AgentTool } from 'twylt-ai';
import { SLEEPER, isRunning, sleeperPid, waitFor } from '../support/mcp.js';
import { ABORT_WITHIN_MS, BOOKING } from './support.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-ai-frameworks-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// ---- as in docs/ai-sdk.md, "LangChain.js"
function forLangChain(twylt: AgentTool) {
  return langchainTool(
    async (input, config) => {
      const { text, output } = await twylt.run(input, { signal: config?.signal });
      return [text, output]; // the model reads the text; the program gets the output as the artifact
    },
    { name: twylt.name, description: twylt.description, schema: twylt.parameters, responseFormat: 'content_and_artifact', verboseParsingErrors: true },
  );
}

// ---- as in docs/ai-sdk.md, "OpenAI Agents SDK"
function forOpenAIAgents(twylt: AgentTool) {
  return openaiTool({
    name: twylt.name,
    description: twylt.description,
    parameters: twylt.parameters as never, // any JSON Schema; see "strict mode" in the docs
    strict: false,
    execute: async (input, _context, details) => (await twylt.run(input, { signal: details?.signal })).text,
    errorFunction: (_context, error) => (error instanceof Error ? error.message : String(error)),
  });
}

describe('LangChain.js', () => {
  it('runs the tool: the model reads the exact JSON text, the program gets the output as the artifact', async () => {
    const [booking] = (await describeForAgents([BOOKING])).map(forLangChain);
    expect(booking!.name).toBe('book_room');
    const message = await booking!.invoke({ type: 'tool_call', id: 'call-1', name: 'book_room', args: { from: '2030-02-01', to: '2030-02-03' } });
    expect(message).toBeInstanceOf(ToolMessage);
    expect(message).toMatchObject({ tool_call_id: 'call-1', content: '{"booking":"B-2030-02-01","nights":2}', artifact: { booking: 'B-2030-02-01', nights: 2 } });
  });

  it("a failure throws the tool's message, which LangChain's ToolNode hands to the model", async () => {
    const [booking] = (await describeForAgents([BOOKING])).map(forLangChain);
    await expect(booking!.invoke({ type: 'tool_call', id: 'call-2', name: 'book_room', args: { from: '2030-02-03', to: '2030-02-01' } })).rejects.toThrow(
      '"book_room" rejected its arguments. Correct them and call it again:\n- to: Must be after "from"',
    );
  });

  it('arguments that break the schema are refused by LangChain itself, with details', async () => {
    const [booking] = (await describeForAgents([BOOKING])).map(forLangChain);
    await expect(booking!.invoke({ type: 'tool_call', id: 'call-3', name: 'book_room', args: { from: 'soon' } })).rejects.toThrow(
      /Received tool input did not match expected schema\nDetails: .*required/,
    );
  });

  it('an aborted run kills the tool process', async () => {
    const [sleeper] = (await describeForAgents([SLEEPER])).map(forLangChain);
    const pidFile = join(scratch, 'langchain.pid');
    const controller = new AbortController();
    const run = sleeper!.invoke({ action: 'wait', pid_file: pidFile, release_file: join(scratch, 'never') }, { signal: controller.signal });
    const pid = await sleeperPid(pidFile);
    controller.abort();
    const aborted = Date.now();
    await expect(run).rejects.toThrow();
    // Within seconds, not at the 30 s default time-out a dropped signal would wait for.
    expect(Date.now() - aborted).toBeLessThan(ABORT_WITHIN_MS);
    await waitFor(() => !isRunning(pid), `the sleeper (pid ${pid}) to be killed`, 5_000);
  });
});

describe('OpenAI Agents SDK', () => {
  it('runs the tool and returns the exact JSON text', async () => {
    const [booking] = (await describeForAgents([BOOKING])).map(forOpenAIAgents);
    expect(booking).toMatchObject({ type: 'function', name: 'book_room', strict: false, parameters: { required: ['from', 'to'] } });
    await expect(booking!.invoke(new RunContext(), '{"from":"2030-02-01","to":"2030-02-03"}')).resolves.toBe('{"booking":"B-2030-02-01","nights":2}');
  });

  it('the model reads why a call failed, checked arguments included (strict: false does not validate)', async () => {
    const [booking] = (await describeForAgents([BOOKING])).map(forOpenAIAgents);
    await expect(booking!.invoke(new RunContext(), '{"from":"soon"}')).resolves.toBe(
      'Invalid arguments for "book_room" (checked against its inputSchema; the tool was not run). Correct them and call it again:\n' +
        '- /: misses required property "to"\n- /from: must match the pattern /^\\d{4}-\\d{2}-\\d{2}$/ (got "soon")',
    );
    await expect(booking!.invoke(new RunContext(), '{"from":"2029-12-31","to":"2030-01-02"}')).resolves.toBe(
      '"book_room" failed: FullyBooked: no room is free on the night of 2030-01-01',
    );
  });
});
