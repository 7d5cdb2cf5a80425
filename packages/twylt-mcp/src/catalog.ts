/**
 * Browse mode (`--catalog browse`, ADR 0025): a large catalog behind two MCP tools instead of
 * one per TWYLT tool, so that a client's tools/list, and the model's context, stay small
 * whatever the catalog holds. `twylt_list` shows the tools (by category, with their schemas),
 * `twylt_call` runs one of them through the same call path as a directly served tool.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { JsonNumber } from 'twylt/client';
import { categoryCounts, categoryOf, inCategory, isRecord, jsonKind } from 'twylt/toolset';
import { successResult } from './result.js';
import type { BridgeTool } from './tools.js';

export const LIST_TOOL = 'twylt_list';
export const CALL_TOOL = 'twylt_call';

/** How many categories the server instructions name before "and N more". */
const MAX_CATEGORIES_NAMED = 40;

/** The two MCP tools of browse mode. */
export const BROWSE_TOOLS: Tool[] = [
  {
    name: LIST_TOOL,
    description:
      'List the tools of this catalog: the categories, and for each tool its name, category, description, and the JSON Schemas of ' +
      'its arguments (inputSchema) and of its result (outputSchema). Give a category ("git", or "git/history") to list only the ' +
      'tools in it and below it. Call this before twylt_call.',
    inputSchema: {
      type: 'object',
      properties: { category: { type: 'string', description: 'List only this category and the categories below it.' } },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  callToolDefinition(LIST_TOOL),
];

/** twylt_call, as browse and search mode offer it: `finder` is the tool that shows the names. */
export function callToolDefinition(finder: string): Tool {
  return {
    name: CALL_TOOL,
    description:
      `Run one tool of the catalog, by the name ${finder} shows, with arguments that match its inputSchema. Returns the tool's ` +
      'result, or an error that says what to correct.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: `The name of a tool listed by ${finder}.` },
        arguments: { type: 'object', description: "The tool's arguments, matching its inputSchema.", additionalProperties: true },
      },
      required: ['name'],
      additionalProperties: false,
    },
  };
}

/** --http builds a server per request: the instructions of a tool set are written once. */
const instructionsOf = new WeakMap<readonly BridgeTool[], string>();

/** The server instructions of browse mode: list first, then call; the categories named. */
export function browseInstructions(tools: readonly BridgeTool[]): string {
  let text = instructionsOf.get(tools);
  if (text === undefined) {
    text = writeInstructions(tools);
    instructionsOf.set(tools, text);
  }
  return text;
}

function writeInstructions(tools: readonly BridgeTool[]): string {
  const categories = categoryCounts(tools.map(categoryOfTool));
  const named = categories.slice(0, MAX_CATEGORIES_NAMED).map(({ name, tools: count }) => `${name} (${count})`);
  const more = categories.length > named.length ? `, and ${categories.length - named.length} more` : '';
  return (
    `This server is a catalog of ${tools.length} tools behind two MCP tools. Call ${LIST_TOOL} first (with a category to ` +
    `narrow it) to see the tools, what each does and the JSON Schema of its arguments; then call ${CALL_TOOL} with ` +
    `{"name": TOOL, "arguments": {...}} where the arguments match that tool's inputSchema. ` +
    `Categories: ${named.join(', ')}${more}.`
  );
}

/** The answer of twylt_list: every category, and the tools of the one asked for (all without one). */
export function listCatalog(tools: readonly BridgeTool[], args: Record<string, unknown>): CallToolResult {
  const extra = Object.keys(args).filter((key) => key !== 'category');
  if (extra.length > 0) return refusal(`${LIST_TOOL} takes only an optional "category"; it does not take ${extra.map((key) => JSON.stringify(key)).join(', ')}.`);
  const { category } = args;
  if (category !== undefined && typeof category !== 'string') return refusal(`"category" must be a string, one of the categories ${LIST_TOOL} shows; got ${jsonKind(category)}.`);
  const categories = categoryCounts(tools.map(categoryOfTool));
  const listed = category === undefined ? tools : tools.filter((tool) => inCategory(categoryOfTool(tool), category));
  if (listed.length === 0) {
    return refusal(`There is no category ${JSON.stringify(category)}. The categories are: ${categories.map(({ name }) => JSON.stringify(name)).join(', ')}.`);
  }
  return successResult({
    categories,
    tools: listed.map((tool) => {
      const { name, description, inputSchema, outputSchema } = tool.definition;
      return { name, category: categoryOfTool(tool), description, inputSchema, ...(outputSchema ? { outputSchema } : {}) };
    }),
  });
}

export type BrowseCall = { name: string; arguments: Record<string, unknown> } | { refused: CallToolResult };

/** What twylt_call asks for: a tool's name and its arguments, or a refusal that says what is wrong. */
export function readBrowseCall(args: Record<string, unknown>, known: ReadonlyMap<string, BridgeTool>, finder = LIST_TOOL): BrowseCall {
  const { name, arguments: inner = {} } = args;
  const extra = Object.keys(args).filter((key) => key !== 'name' && key !== 'arguments');
  if (extra.length > 0) {
    return refused(`${CALL_TOOL} takes {"name": TOOL, "arguments": {...}}; put ${extra.map((key) => JSON.stringify(key)).join(', ')} inside "arguments".`);
  }
  if (typeof name !== 'string') return refused(`"name" must be a string, the name of a tool that ${finder} shows; got ${jsonKind(name)}.`);
  if (!isRecord(inner) || inner instanceof JsonNumber) return refused(`"arguments" must be a JSON object, the tool's arguments; got ${jsonKind(inner)}.`);
  if (!known.has(name)) return refused(`There is no tool named ${JSON.stringify(name)} in this catalog. Call ${finder} to see the tools and their names.`);
  return { name, arguments: inner };
}

function categoryOfTool(tool: BridgeTool): string {
  return categoryOf(tool.runner.entry);
}

function refused(message: string): { refused: CallToolResult } {
  return { refused: refusal(message) };
}

/** A browse request the model must correct: an isError result, as a failed call is. */
function refusal(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}
