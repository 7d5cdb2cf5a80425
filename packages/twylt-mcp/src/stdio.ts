/** Serve a set of tools over stdio: the transport MCP clients use to start local servers. */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallLimiter, ToolEntry } from 'twylt/toolset';
import { CALL_TOOL, LIST_TOOL } from './catalog.js';
import { ExactStdioServerTransport, type ExactStdioOptions } from './exact-stdio.js';
import { createServer } from './server.js';
import { SEARCH_TOOL } from './search.js';
import { startServing, type ServingOptions } from './serving.js';

export interface StdioOptions extends ServingOptions, ExactStdioOptions {
  /** Bounds the tool processes running at once (default: no bound; the one client decides). */
  limiter?: CallLimiter;
}

/**
 * Describe every tool (rejecting with a StartupError when one cannot be served), then
 * answer MCP requests on stdin/stdout until the client goes away. A tool left out is
 * described again in the background; when it joins, the client is sent tools/list_changed.
 */
export async function serveStdio(configs: readonly ToolEntry[], options: StdioOptions = {}): Promise<Server> {
  const { served, search, log, retry } = await startServing(configs, options);
  const tools = served.current;
  const server = createServer(() => served.current, { log, limiter: options.limiter, catalog: options.catalog, search });
  // Browse and search mode's two tools stay the same; twylt_list and twylt_search show the newcomer.
  if (options.catalog === undefined || options.catalog === 'tools') served.onChange(() => void server.sendToolListChanged().catch((error: Error) => log(`MCP: ${error.message}`)));
  // The client gone (stdin ended, stdout broken) or the bridge closed: no more calls.
  server.onclose = () => {
    for (const tool of served.current) tool.runner.close();
  };
  await server.connect(new ExactStdioServerTransport(process.stdin, process.stdout, options));
  const retries = retry();
  // Closed (by the client, or on a signal): no retry is left running.
  const closed = server.onclose;
  server.onclose = () => {
    retries.stop();
    closed?.();
  };
  // The client is gone when our stdout breaks (or our stdin ends: the transport closes then).
  // Closing aborts the calls still running, which kills their processes.
  process.stdout.once('error', () => void server.close());
  const names = tools.map((tool) => tool.definition.name).join(', ');
  const finder = options.catalog === 'browse' ? LIST_TOOL : options.catalog === 'search' ? SEARCH_TOOL : undefined;
  log(finder ? `serving ${tools.length} tools through ${finder} and ${CALL_TOOL}: ${names}` : `serving ${names}`);
  return server;
}
