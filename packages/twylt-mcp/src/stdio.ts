/** Serve a set of tools over stdio: the transport MCP clients use to start local servers. */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallLimiter, ToolEntry } from 'twylt/toolset';
import { CALL_TOOL, LIST_TOOL } from './catalog.js';
import type { CatalogMode } from './args.js';
import { ExactStdioServerTransport, type ExactStdioOptions } from './exact-stdio.js';
import { stderrLog } from './log.js';
import { createServer } from './server.js';
import { describeTools, type DescribeOptions } from './tools.js';

export interface StdioOptions extends DescribeOptions, ExactStdioOptions {
  /** Bounds the tool processes running at once (default: no bound; the one client decides). */
  limiter?: CallLimiter;
  /** One MCP tool per TWYLT tool (default), or browse mode's two (ADR 0025). */
  catalog?: CatalogMode;
}

/**
 * Describe every tool (rejecting with a StartupError when one cannot be served), then
 * answer MCP requests on stdin/stdout until the client goes away.
 */
export async function serveStdio(configs: readonly ToolEntry[], options: StdioOptions = {}): Promise<Server> {
  const log = options.log ?? stderrLog;
  const tools = await describeTools(configs, { ...options, log });
  const server = createServer(tools, { log, limiter: options.limiter, catalog: options.catalog });
  await server.connect(new ExactStdioServerTransport(process.stdin, process.stdout, options));
  // The client is gone when our stdout breaks (or our stdin ends: the transport closes then).
  // Closing aborts the calls still running, which kills their processes.
  process.stdout.once('error', () => void server.close());
  const names = tools.map((tool) => tool.definition.name).join(', ');
  log(options.catalog === 'browse' ? `serving ${tools.length} tools through ${LIST_TOOL} and ${CALL_TOOL}: ${names}` : `serving ${names}`);
  return server;
}
