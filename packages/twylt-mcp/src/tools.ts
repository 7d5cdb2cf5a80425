/**
 * Start-up: describe every configured tool and turn its spec into an MCP tool definition.
 * Any tool that cannot be served stops the start, with a message naming it: a bridge that
 * silently drops a tool would leave its users guessing.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { validateToolName } from '@modelcontextprotocol/sdk/shared/toolNameValidation.js';
import type { ToolSpec } from 'twylt/client';
import type { ToolConfig } from './config.js';
import type { Log } from './log.js';
import { createRunner, type RunnerDefaults, type ToolRunner } from './runner.js';

/** One served tool: its MCP definition and the means to run it. */
export interface BridgeTool {
  /** What tools/list shows. */
  definition: Tool;
  runner: ToolRunner;
}

/** The bridge cannot start; the message names every tool at fault. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

export interface DescribeOptions extends RunnerDefaults {
  /** Where warnings go (names MCP advises against, output schemas MCP cannot carry). */
  log?: Log;
}

/** Describe all tools at once; fail with every problem found, not just the first. */
export async function describeTools(configs: readonly ToolConfig[], options: DescribeOptions = {}): Promise<BridgeTool[]> {
  if (configs.length === 0) throw new StartupError('no tools to serve: give a command after "--" or a --config file');
  const log = options.log ?? (() => {});
  const settled = await Promise.allSettled(configs.map((config) => describeOne(config, options, log)));
  const problems = settled.flatMap((outcome) => (outcome.status === 'rejected' ? [(outcome.reason as Error).message] : []));
  const tools = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  problems.push(...duplicateNames(tools));
  if (problems.length > 0) throw new StartupError(problems.join('\n'));
  return tools;
}

async function describeOne(config: ToolConfig, defaults: RunnerDefaults, log: Log): Promise<BridgeTool> {
  const runner = createRunner(config, defaults);
  const label = `tool (${showCommand(config.command)})`;
  let spec: ToolSpec;
  try {
    spec = await runner.spec();
  } catch (error) {
    throw new StartupError(`cannot describe ${label}: ${(error as Error).message}`);
  }
  if (!isRecord(spec) || !isRecord(spec.inputSchema) || !isRecord(spec.outputSchema)) {
    throw new StartupError(`cannot serve ${label}: its json_spec lacks an inputSchema or outputSchema object`);
  }
  const name = config.name ?? spec.name;
  if (typeof name !== 'string' || name === '') {
    throw new StartupError(`cannot serve ${label}: it publishes no name; give it one with "name" in a config file`);
  }
  let mcp: McpView;
  try {
    mcp = toMcpTool(name, spec);
  } catch (error) {
    throw new StartupError(`cannot serve "${name}" (${showCommand(config.command)}): ${(error as Error).message}`);
  }
  for (const warning of [...mcp.warnings, ...validateToolName(name).warnings]) log(`"${name}": ${warning}`);
  return { definition: mcp.tool, runner };
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

function duplicateNames(tools: readonly BridgeTool[]): string[] {
  const byName = new Map<string, BridgeTool[]>();
  for (const tool of tools) byName.set(tool.definition.name, [...(byName.get(tool.definition.name) ?? []), tool]);
  return [...byName]
    .filter(([, same]) => same.length > 1)
    .map(
      ([name, same]) =>
        `${same.length} tools are named "${name}": ${same.map((tool) => showCommand(tool.runner.command)).join(' and ')}; ` +
        'rename all but one with "name" in a config file',
    );
}

/** argv as a reader would type it; only arguments that need it are quoted. */
function showCommand(command: readonly string[]): string {
  return command.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : JSON.stringify(arg))).join(' ');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
