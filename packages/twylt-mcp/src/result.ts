/**
 * Outcomes of a call as MCP results. Every failure becomes an `isError` result written for
 * the model that made the call: what went wrong, and enough detail to correct its input.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SchemaMismatchError, ToolError, TwyltClientError } from 'twylt/client';

/** How much of a failing tool's stderr a result quotes. */
const STDERR_EXCERPT_CHARS = 2000;

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
  return { isError: true, content: [{ type: 'text', text: failureText(toolName, error) }] };
}

function failureText(toolName: string, error: unknown): string {
  // A TWYLT failure (exit 2 to 6): the tool's own error object, exactly as it reported it.
  if (error instanceof ToolError && error.error) return JSON.stringify({ error: error.error });
  if (error instanceof SchemaMismatchError) {
    const head =
      error.side === 'input'
        ? `Invalid arguments for "${toolName}" (checked against its inputSchema; the tool was not run):`
        : `"${toolName}" returned output that does not match its published outputSchema:`;
    return [head, ...error.issues.map((issue) => `- ${issue.path || '/'}: ${issue.message}`)].join('\n');
  }
  if (error instanceof TwyltClientError) {
    const stderr = error.stderr.trim();
    const excerpt = stderr.length > STDERR_EXCERPT_CHARS ? `...${stderr.slice(-STDERR_EXCERPT_CHARS)}` : stderr;
    return `Tool "${toolName}" failed: ${error.message}` + (excerpt ? `\nIts stderr:\n${excerpt}` : '');
  }
  return `Tool "${toolName}" could not be run: ${error instanceof Error ? error.message : String(error)}`;
}
