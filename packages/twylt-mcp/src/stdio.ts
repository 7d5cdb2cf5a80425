/** Serve a set of tools over stdio: the transport MCP clients use to start local servers. */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallLimiter, ToolEntry } from 'twylt/toolset';
import { CALL_TOOL, LIST_TOOL } from './catalog.js';
import type { CatalogMode } from './args.js';
import { ExactStdioServerTransport, type ExactStdioOptions } from './exact-stdio.js';
import { stderrLog } from './log.js';
import { createServer } from './server.js';
import { ServedTools, retryLeftOut, type RetryOptions } from './retry.js';
import { describeTools } from './tools.js';
import { CatalogSearch, SEARCH_TOOL } from './search.js';
import type { EmbeddingsFlags } from 'twylt/toolset';

export interface StdioOptions extends RetryOptions, ExactStdioOptions {
  /** Bounds the tool processes running at once (default: no bound; the one client decides). */
  limiter?: CallLimiter;
  /** One MCP tool per TWYLT tool (default), or browse mode's two (ADR 0025), or search mode's two. */
  catalog?: CatalogMode;
  /** Search mode: rank by meaning too, through this embeddings endpoint. */
  searchEmbeddings?: EmbeddingsFlags;
  /** Search mode: the catalog files served, whose stored index (`twylt scan --write`) spares building it. */
  searchCatalogs?: readonly string[];
}

/**
 * Describe every tool (rejecting with a StartupError when one cannot be served), then
 * answer MCP requests on stdin/stdout until the client goes away. A tool left out is
 * described again in the background; when it joins, the client is sent tools/list_changed.
 */
export async function serveStdio(configs: readonly ToolEntry[], options: StdioOptions = {}): Promise<Server> {
  const log = options.log ?? stderrLog;
  const leftOut: ToolEntry[] = [];
  // One defaults object for the tools served now and those described again later.
  options = { ...options, defaults: options.defaults ?? {} };
  const tools = await describeTools(configs, { ...options, log, onLeftOut: (entry) => leftOut.push(entry) });
  const served = new ServedTools(tools);
  // Search mode: the index is ready before the first request.
  const search = options.catalog === 'search' ? new CatalogSearch(options.searchEmbeddings, log, options.searchCatalogs) : undefined;
  await search?.prepare(served.current);
  const server = createServer(() => served.current, { log, limiter: options.limiter, catalog: options.catalog, search });
  // Browse and search mode's two tools stay the same; twylt_list and twylt_search show the newcomer.
  if (options.catalog === undefined || options.catalog === 'tools') served.onChange(() => void server.sendToolListChanged().catch((error: Error) => log(`MCP: ${error.message}`)));
  // The client gone (stdin ended, stdout broken) or the bridge closed: no more calls.
  server.onclose = () => {
    for (const tool of served.current) tool.runner.close();
  };
  await server.connect(new ExactStdioServerTransport(process.stdin, process.stdout, options));
  const retries = retryLeftOut(leftOut, served, { ...options, log });
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
