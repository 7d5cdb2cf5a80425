/**
 * twylt-mcp: serve TWYLT executables, in any language, as MCP tools.
 *
 *   const server = await serveStdio([{ command: ['python3', 'tools/echo.py'] }]);
 *
 * Over HTTP (stateless Streamable HTTP, for remote agents and replicas):
 *
 *   const bridge = await serveHttp(entries, { port: 8080, token });
 *
 * Or step by step: `describeTools` (start-up checks), `createServer` (an SDK Server to
 * connect to any transport; search mode: `catalog: "search"` with `search: new CatalogSearch()`).
 */
export {
  ConfigError,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_TIMEOUT_MS,
  createRunner,
  parseConfig,
  readConfig,
  type RunnerDefaults,
  type ToolEntry,
  type ToolEntry as ToolConfig,
  type ToolRunner,
} from 'twylt/toolset';
export { StartupError, describeTools, toMcpTool, type BridgeTool, type DescribeOptions, type McpView } from './tools.js';
export { BUSY_ERROR_CODE, DEFAULT_MAX_QUEUE, createServer, type ServerOptions } from './server.js';
export { serveStdio, type StdioOptions } from './stdio.js';
export { DEFAULT_RETRY_MS, MAX_RETRY_MS, ServedTools, retryLeftOut, type RetryOptions, type Retries } from './retry.js';
export { DEFAULT_MAX_MESSAGE_BYTES } from './exact-stdio.js';
export { DEFAULT_GRACE_MS, DEFAULT_MAX_BODY_BYTES, HEALTH_PATH, MCP_PATH, serveHttp, type HttpBridge, type HttpOAuthOptions, type HttpOptions } from './http/index.js';
export { BROWSE_TOOLS, CALL_TOOL, LIST_TOOL, browseInstructions, listCatalog } from './catalog.js';
export { CatalogSearch, SEARCH_TOOL, SEARCH_TOOLS, searchInstructions } from './search.js';
export type { CatalogMode } from './catalog-mode.js';
export { outcomeOf, type CallOutcome, type CallRecord } from './outcome.js';
export { CallLimiter, QueueFullError } from 'twylt/toolset';
export type { EventLog, Log } from './log.js';
