/**
 * twylt-mcp: serve TWYLT executables, in any language, as MCP tools.
 *
 *   const server = await serveStdio([{ command: ['python3', 'tools/echo.py'] }]);
 *
 * Or step by step: `describeTools` (start-up checks), `createServer` (an SDK Server to
 * connect to any transport).
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
export { createServer, type ServerOptions } from './server.js';
export { serveStdio } from './stdio.js';
export type { Log } from './log.js';
