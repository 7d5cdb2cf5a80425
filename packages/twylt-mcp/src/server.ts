/**
 * The MCP server: tools/list and tools/call over a set of described TWYLT tools.
 *
 * It uses the SDK's low-level `Server` on purpose. The high-level `McpServer` builds tool
 * schemas from Zod; here each tool's published JSON Schemas must reach the client exactly
 * as the tool wrote them.
 */
import { createRequire } from 'node:module';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AbortError } from 'twylt/client';
import type { Log } from './log.js';
import { failureResult, successResult } from './result.js';
import type { BridgeTool } from './tools.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

/** TWYLT reads this key as a describe request, so no call may carry it. */
const DESCRIBE_KEY = 'describe';

export interface ServerOptions {
  /** Where failed calls and unreadable MCP messages are reported (default: nowhere). */
  log?: Log;
}

export function createServer(tools: readonly BridgeTool[], options: ServerOptions = {}): Server {
  const log = options.log ?? (() => {});
  const byName = new Map(tools.map((tool) => [tool.definition.name, tool]));
  const server = new Server({ name: 'twylt-mcp', version }, { capabilities: { tools: {} } });
  // Messages the SDK cannot handle (malformed JSON-RPC, say) are dropped; say so.
  server.onerror = (error) => log(`MCP: ${error.message}`);

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((tool) => tool.definition) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = request.params;
    const tool = byName.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    if (Object.hasOwn(args, DESCRIBE_KEY)) {
      return failureResult(name, new Error(`arguments must not contain "${DESCRIBE_KEY}": TWYLT reserves it for describe requests`));
    }
    try {
      const { output } = await tool.runner.call(args, { signal: extra.signal, numbers: 'text' });
      return successResult(output);
    } catch (error) {
      // A cancelled request gets no answer (the SDK drops it); there is nothing to report.
      if (!(error instanceof AbortError)) log(`call of "${name}" failed: ${(error as Error).message}`);
      return failureResult(name, error);
    }
  });

  return server;
}
