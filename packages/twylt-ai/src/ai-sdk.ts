/**
 * TWYLT tools as tools of the Vercel AI SDK (`ai` 6 and 7).
 *
 * Each is a dynamic tool (its types are known only at run time, as with MCP tools). What the
 * SDK does with it:
 * - the model's arguments go through `inputSchema.validate` (the client's Ajv check); when
 *   they fail, the SDK does not call `execute` and hands the model a tool error that
 *   names each issue;
 * - an error thrown by `execute` becomes a `tool-error` part, and the model reads its
 *   message (TwyltCallError writes it for the model);
 * - the value `execute` returns is the tool's parsed output, and the model reads it
 *   through `toModelOutput` as the tool's JSON text, so numbers keep their digits. (As a
 *   `json` output a JsonNumber would not survive: ai 7 round-trips it through JSON.parse,
 *   and ai 6's prompt check copies it into a plain object when messages are sent again.)
 */
import { jsonSchema, type JSONSchema7, type Tool } from 'ai';
import type { ToolEntryLike } from 'twylt/toolset';
import { agentTools, type AgentTool, type AgentToolsOptions } from './agent-tools.js';
import { issueLines } from 'twylt/toolset';

export type TwyltToolsOptions = AgentToolsOptions;

/**
 * What `execute` reads of its second argument, when it is called directly (in a test, say).
 * The SDK passes more; ai 7's options also require a `context`, which these tools never use.
 */
export interface TwyltExecuteOptions {
  toolCallId?: string;
  messages?: readonly unknown[];
  /** Kills the tool's process tree when it fires. */
  abortSignal?: AbortSignal;
}

/**
 * A TWYLT tool for the AI SDK: input is a JSON object, output whatever the tool publishes.
 * Its `execute` is always there, and may be called with the SDK's options or with
 * TwyltExecuteOptions (or none), under ai 6 and ai 7 alike: the type names no option type
 * of either major.
 */
export type TwyltAiTool = Tool<Record<string, unknown>, unknown> & {
  execute(input: Record<string, unknown>, options?: TwyltExecuteOptions): Promise<unknown>;
};

/**
 * Describe every entry at once; resolve to an AI SDK tool set keyed by each tool's
 * published name (or its entry's `name`). Rejects with a ToolsetError naming every tool at
 * fault, each by its command: one that cannot be described, a name providers reject, two
 * tools with one name.
 */
export async function twyltTools(entries: readonly ToolEntryLike[], options: TwyltToolsOptions = {}): Promise<Record<string, TwyltAiTool>> {
  const tools = await agentTools(entries, options, true);
  return Object.fromEntries(tools.map((tool) => [tool.name, aiTool(tool)]));
}

/** One TWYLT tool; you choose the key it has in your tool set. */
export async function twyltTool(entry: ToolEntryLike, options: TwyltToolsOptions = {}): Promise<TwyltAiTool> {
  const [tool] = await agentTools([entry], options, false);
  return aiTool(tool!);
}

/** The AI SDK view of an AgentTool. */
export function aiTool(tool: AgentTool): TwyltAiTool {
  // The JSON text of each output, for toModelOutput; outputs that came back from a client
  // (UI messages) are not in it and are written with JSON.stringify, which keeps a
  // JsonNumber's digits too.
  const texts = new WeakMap<object, string>();
  return {
    type: 'dynamic',
    description: tool.description,
    inputSchema: jsonSchema<Record<string, unknown>>(tool.parameters as JSONSchema7, {
      validate: (value) => {
        const issues = tool.check(value);
        if (issues.length === 0) return { success: true, value: value as Record<string, unknown> };
        return { success: false, error: new Error(`the arguments break the inputSchema of "${tool.name}":\n${issueLines(issues)}`) };
      },
    }),
    // Checked by the client on every call already.
    outputSchema: jsonSchema(tool.outputSchema as JSONSchema7),
    ...(tool.examples.length > 0 ? { inputExamples: tool.examples.map((input) => ({ input })) } : {}),
    execute: async (input: Record<string, unknown>, options?: TwyltExecuteOptions) => {
      const { output, text } = await tool.run(input, { signal: options?.abortSignal });
      if (typeof output === 'object' && output !== null) texts.set(output, text);
      return output;
    },
    toModelOutput: ({ output }: { output: unknown }) => ({
      type: 'text',
      value: (typeof output === 'object' && output !== null ? texts.get(output) : undefined) ?? JSON.stringify(output) ?? 'null',
    }),
  };
}
