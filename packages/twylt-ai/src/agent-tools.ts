/**
 * TWYLT tools as any agent framework needs them, before the framework's own wrapping: a
 * name the providers accept, the published description and schemas, an argument check,
 * and a call that returns the output with the tool's exact numbers and throws errors
 * written for the model. `twyltTools` wraps these for the AI SDK; a few lines wrap them
 * for LangChain.js or the OpenAI Agents SDK (docs/ai-sdk.md).
 */
import { parseJson, schemaValidator, type JsonSchema, type SchemaIssue, type ToolSpec } from 'twylt/client';
import {
  ToolsetError,
  describeToolset,
  invalidArguments,
  isRecord,
  showCommand,
  toEntry,
  type DescribedTool,
  type ToolDefaults,
  type SpecCache,
  type ToolEntryLike,
  type ToolRunner,
} from 'twylt/toolset';
import { TwyltCallError, callFailure } from './error.js';
import { withTraceContext } from './trace-context.js';

/** Tool names as OpenAI and Anthropic accept them (Google also wants a letter or "_" first). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const RENAME_HINT = 'with "name" in its entry, e.g. { command: [...], name: "my_tool" }';

/** The options are also the defaults of every tool (time-outs, limits, warm processes), read by reference. */
export interface AgentToolsOptions extends ToolDefaults {
  /**
   * Specs fetched before, shared across calls: pass one `new SpecCache()` to every call of a
   * server that builds a tool set per request, and each tool is described once.
   */
  describeOnce?: SpecCache;
  /**
   * Leave out a tool that cannot be described (it fails or runs past its time-out) and hand
   * its problem here; the others are served, and the next call describes it again. Without
   * it, such a tool rejects the whole set.
   */
  onUndescribed?: (problem: string) => void;
}

/** What a call gives back. */
export interface AgentResult {
  /** The parsed output; an integer beyond 2^53 is a JsonNumber, so no digit is lost. */
  output: unknown;
  /** The output as compact JSON, every number spelt as the tool wrote it: what a model should read. */
  text: string;
}

/** One TWYLT tool, ready for an agent framework. */
export interface AgentTool {
  /** The entry's `name`, else the published one; matches TOOL_NAME_PATTERN. */
  name: string;
  description: string;
  /** The published inputSchema, as frameworks call it. */
  parameters: JsonSchema;
  outputSchema: JsonSchema;
  /** The inputs of the published few-shot examples. */
  examples: Record<string, unknown>[];
  spec: ToolSpec;
  runner: ToolRunner;
  /** The issues of `input` against the inputSchema (Ajv); empty when it is valid. */
  check(input: unknown): SchemaIssue[];
  /**
   * Run the tool: transport from the entry (default: the CLI argument, stdin for large
   * input), the arguments checked first. Rejects with a TwyltCallError; on `signal` the
   * tool's process tree is killed.
   */
  run(input: unknown, options?: { signal?: AbortSignal }): Promise<AgentResult>;
}

/**
 * Describe every entry at once and make each an AgentTool. Rejects with a ToolsetError that
 * names every tool at fault (cannot be described, a name providers reject, two tools with one
 * name), each by its command.
 */
export async function describeForAgents(entries: readonly ToolEntryLike[], options: AgentToolsOptions = {}): Promise<AgentTool[]> {
  return agentTools(entries, options, true);
}

/** `checkNames` false: the caller picks the names (twyltTool). */
export async function agentTools(entries: readonly ToolEntryLike[], options: AgentToolsOptions, checkNames: boolean): Promise<AgentTool[]> {
  const described = await describeToolset(entries.map(toEntry), {
    defaults: options,
    cache: options.describeOnce,
    onUndescribed: options.onUndescribed,
    renameHint: RENAME_HINT,
    checkName: checkNames ? nameProblem : undefined,
  });
  // Compile every inputSchema now: a schema Ajv cannot read is a start-up error, not a
  // surprise at the model's first call.
  const settled = await Promise.allSettled(described.map((tool) => schemaValidator(tool.spec.inputSchema)));
  const problems = described.flatMap((tool, i) => {
    const outcome = settled[i]!;
    const type = tool.spec.inputSchema.type;
    const wrong =
      outcome.status === 'rejected'
        ? `its inputSchema is not usable JSON Schema: ${(outcome.reason as Error).message}`
        : type !== undefined && type !== 'object'
          ? `its inputSchema has type ${JSON.stringify(type)}; model providers take arguments as an object`
          : undefined;
    return wrong ? [`cannot serve "${tool.name}" (${showCommand(tool.runner.entry.command)}): ${wrong}`] : [];
  });
  if (problems.length > 0) {
    for (const tool of described) tool.runner.close();
    throw new ToolsetError(problems);
  }
  return described.map((tool, i) => agentTool(tool, (settled[i] as PromiseFulfilledResult<(value: unknown) => SchemaIssue[]>).value));
}

function nameProblem(name: string): string | undefined {
  return TOOL_NAME_PATTERN.test(name) ? undefined : 'model providers accept only tool names of 1 to 64 letters, digits, "_" and "-"';
}

function agentTool({ name, spec, runner }: DescribedTool, check: (value: unknown) => SchemaIssue[]): AgentTool {
  return {
    name,
    description: typeof spec.description === 'string' ? spec.description : '',
    // Providers want `type: "object"` at the root; a TWYLT input always is one.
    parameters: spec.inputSchema.type === undefined ? { type: 'object', ...spec.inputSchema } : spec.inputSchema,
    outputSchema: spec.outputSchema,
    examples: (Array.isArray(spec.few_shots) ? spec.few_shots : []).flatMap((shot) => (isRecord(shot?.input) ? [shot.input] : [])),
    spec,
    runner,
    check,
    async run(input, options = {}) {
      // A TWYLT input is a JSON object (the runner refuses one that would be a describe request).
      if (!isRecord(input)) throw new TwyltCallError(name, invalidArguments(name, [{ path: '', message: 'must be a JSON object', keyword: 'type' }]));
      try {
        const result = await withTraceContext(() => runner.call(input, { signal: options.signal }));
        // Parsed once more with every number's spelling kept (1.0, 1e-07), for the model.
        return { output: result.output, text: JSON.stringify(parseJson(result.text, 'text')) };
      } catch (error) {
        throw callFailure(name, error);
      }
    },
  };
}
