/**
 * Start-up: describe every configured tool (twylt/toolset) and turn its spec into an MCP
 * tool definition. A tool that cannot be described is left out and logged (or, `strict`,
 * stops the start), and handed to `onLeftOut` to be described again (retry.ts); any other
 * tool that cannot be served stops the start, with a message naming it: a bridge that
 * silently drops a tool would leave its users guessing.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { validateToolName } from '@modelcontextprotocol/sdk/shared/toolNameValidation.js';
import type { ToolSpec } from 'twylt/client';
import { ToolsetError, describeToolset, showCommand, type ToolDefaults, type ToolEntry, type ToolRunner } from 'twylt/toolset';
import type { Log } from './log.js';

/** One served tool: its MCP definition and the means to run it. */
export interface BridgeTool {
  /** What tools/list shows. */
  definition: Tool;
  runner: ToolRunner;
  /** The inputs of its few-shot examples: search mode indexes them. */
  examples?: readonly unknown[];
}

/** The bridge cannot start; the message names every tool at fault, one per line. */
export class StartupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StartupError';
  }
}

export interface DescribeOptions {
  /**
   * Time-outs, limits and warm processes of every tool that sets none of its own; handed on
   * by reference (the tools described again later get the same object, and so one warm cap).
   */
  defaults?: ToolDefaults;
  /** Where warnings go (names MCP advises against, output schemas MCP cannot carry). */
  log?: Log;
  /** Refuse to start when a tool cannot be described; by default it is left out and logged. */
  strict?: boolean;
  /** Told of each tool left out because it could not be described, to describe it again later. */
  onLeftOut?: (entry: ToolEntry) => void;
}

/** Describe all tools at once; fail with every problem found, not just the first. */
export async function describeTools(entries: readonly ToolEntry[], options: DescribeOptions = {}): Promise<BridgeTool[]> {
  if (entries.length === 0) throw new StartupError('no tools to serve: give a command after "--" or a --config file');
  const log = options.log ?? (() => {});
  let described;
  try {
    const { onLeftOut } = options;
    const onUndescribed = options.strict
      ? undefined
      : (problem: string, entry: ToolEntry) => {
          log(`left out${onLeftOut ? ', described again in the background' : ''}: ${problem}`);
          onLeftOut?.(entry);
        };
    described = await describeToolset(entries, { defaults: options.defaults, onUndescribed });
  } catch (error) {
    if (error instanceof ToolsetError) throw new StartupError(error.message, { cause: error });
    throw error;
  }
  const problems: string[] = [];
  const tools: BridgeTool[] = [];
  for (const { name, spec, runner } of described) {
    try {
      tools.push(bridgeTool(name, spec, runner, log));
    } catch (error) {
      problems.push(`cannot serve "${name}" (${showCommand(runner.entry.command)}): ${(error as Error).message}`);
    }
  }
  if (problems.length > 0) {
    for (const tool of described) tool.runner.close();
    throw new StartupError(problems.join('\n'));
  }
  return tools;
}

/** A described tool as the bridge serves it, its warnings logged; throws when MCP cannot carry it. */
export function bridgeTool(name: string, spec: ToolSpec, runner: ToolRunner, log: Log): BridgeTool {
  const mcp = toMcpTool(name, spec);
  for (const warning of [...mcp.warnings, ...validateToolName(name).warnings]) log(`"${name}": ${warning}`);
  const examples = Array.isArray(spec.few_shots) ? spec.few_shots.map((shot) => shot?.input) : [];
  return { definition: mcp.tool, runner, examples };
}

export interface McpView {
  tool: Tool;
  /** What a user should know about the published schemas. */
  warnings: string[];
}

/**
 * The MCP view of a spec: name, description and both schemas exactly as published.
 * MCP requires `type: "object"` at the root of both schemas; a TWYLT input always is an
 * object, so an input schema that says nothing about its type gets that one key. An
 * output schema that is not an object schema cannot be carried and is left out.
 */
export function toMcpTool(name: string, spec: ToolSpec): McpView {
  const { inputSchema, outputSchema } = spec;
  const warnings: string[] = [];
  if (inputSchema.type !== undefined && inputSchema.type !== 'object') {
    throw new Error(`its inputSchema has type ${JSON.stringify(inputSchema.type)}; MCP needs an object schema`);
  }
  if (inputSchema.type === undefined) warnings.push('its inputSchema declares no type; serving it with type "object"');
  const tool: Tool = {
    name,
    description: typeof spec.description === 'string' ? spec.description : '',
    inputSchema: (inputSchema.type === 'object' ? inputSchema : { type: 'object', ...inputSchema }) as Tool['inputSchema'],
  };
  if (outputSchema.type === 'object') tool.outputSchema = outputSchema as Tool['outputSchema'];
  else warnings.push('its outputSchema is not an object schema, which MCP cannot carry; it is left out of tools/list');
  return { tool, warnings };
}
