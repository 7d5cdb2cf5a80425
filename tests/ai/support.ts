/**
 * A scripted model for the twylt-ai tests: the AI SDK's own MockLanguageModelV3, answering
 * each step with the tool calls or text a test gives it, and recording every prompt it gets
 * (what a real provider would have been sent).
 */
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';
import { ROOT } from '../support/process.js';

/** How soon after abort() a generation must reject: far below the 30 s default time-out a dropped signal would wait for. */
export const ABORT_WITHIN_MS = 10_000;

export const BOOKING = [process.execPath, `${ROOT}tests/ai/fixtures/booking.mjs`];

type CallOptions = MockLanguageModelV3['doGenerateCalls'][number];
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
export type Prompt = CallOptions['prompt'];

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

let calls = 0;

/** One step of the model: it calls these tools (`[name, arguments]`), all at once. */
export function callTools(...toolCalls: [string, Record<string, unknown>][]): GenerateResult {
  return {
    content: toolCalls.map(([toolName, input]) => ({ type: 'tool-call', toolCallId: `call-${++calls}`, toolName, input: JSON.stringify(input) })),
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: USAGE,
    warnings: [],
  };
}

/** One step of the model: it answers with text and stops. */
export function answer(text: string): GenerateResult {
  return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE, warnings: [] };
}

/**
 * A model that takes these steps in order. Like a real provider, it refuses to start a step
 * once the generation's abortSignal has fired.
 */
export function scriptedModel(...steps: GenerateResult[]): MockLanguageModelV3 {
  let next = 0;
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      options.abortSignal?.throwIfAborted();
      const step = steps[next++];
      if (!step) throw new Error(`the script has ${steps.length} steps; step ${next} was asked for`);
      return step;
    },
  });
}

type StreamResult = Awaited<ReturnType<MockLanguageModelV3['doStream']>>;

/** The same steps for streamText: each streamed as the parts a provider would send. */
export function scriptedStreamingModel(...steps: GenerateResult[]): MockLanguageModelV3 {
  let next = 0;
  return new MockLanguageModelV3({
    doStream: async (options): Promise<StreamResult> => {
      options.abortSignal?.throwIfAborted();
      const step = steps[next++];
      if (!step) throw new Error(`the script has ${steps.length} steps; step ${next} was asked for`);
      const parts = step.content.flatMap((part): unknown[] =>
        part.type === 'text'
          ? [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: part.text }, { type: 'text-end', id: 't' }]
          : [part],
      );
      const stream = [{ type: 'stream-start', warnings: [] }, ...parts, { type: 'finish', finishReason: step.finishReason, usage: step.usage }];
      return { stream: convertArrayToReadableStream(stream as never[]) };
    },
  });
}

/** The tool results the model was sent in a prompt: name and output, in order. */
export function toolResultsIn(prompt: Prompt): { toolName: string; output: { type: string; value?: unknown } }[] {
  return prompt.flatMap((message) =>
    message.role === 'tool' ? message.content.flatMap((part) => (part.type === 'tool-result' ? [{ toolName: part.toolName, output: part.output }] : [])) : [],
  );
}
