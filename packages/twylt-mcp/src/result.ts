/**
 * Outcomes of a call as MCP results. Every failure becomes an `isError` result written for
 * the model that made the call (the description twylt-ai gives its models too): what went
 * wrong, and enough detail to correct its input. A failure the tool reported itself also
 * carries its error object, as a second text block, for programs.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from 'twylt/client';
import { describeFailure } from 'twylt/toolset';

/**
 * The output as structuredContent, and the same JSON as a text block for older clients.
 * Parse it with `text` fidelity: a JsonNumber is written back as the tool's own digits by
 * whatever serialises the message, so both carry the tool's numbers unchanged.
 */
export function successResult(output: unknown): CallToolResult {
  const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(output) }] };
  // MCP's structuredContent is an object; other JSON values travel as text only.
  if (typeof output === 'object' && output !== null && !Array.isArray(output)) {
    result.structuredContent = output as Record<string, unknown>;
  }
  return result;
}

export function failureResult(toolName: string, error: unknown): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: describeFailure(toolName, error).message }];
  if (error instanceof ToolError && error.error) content.push({ type: 'text', text: JSON.stringify({ error: error.error }) });
  return { isError: true, content };
}
