/**
 * What both transports do before they answer: one defaults object for every tool, the tools
 * described (those that cannot be, left out to be described again), search mode's index
 * ready, and the retries of the left-out tools started once the bridge answers.
 */
import type { EmbeddingsFlags, ToolEntry } from 'twylt/toolset';
import type { CatalogMode } from './catalog-mode.js';
import { stderrLog, type Log } from './log.js';
import { ServedTools, retryLeftOut, type Retries, type RetryOptions } from './retry.js';
import { CatalogSearch } from './search.js';
import { describeTools } from './tools.js';

export interface ServingOptions extends RetryOptions {
  /** One MCP tool per TWYLT tool (default), or browse mode's two (ADR 0025), or search mode's two. */
  catalog?: CatalogMode;
  /** Search mode: rank by meaning too, through this embeddings endpoint. */
  searchEmbeddings?: EmbeddingsFlags;
  /** Search mode: the catalog files served, whose stored index (`twylt scan --write`) spares building it. */
  searchCatalogs?: readonly string[];
}

export interface Serving {
  /** The tools served now; a left-out tool joins when a retry describes it. */
  served: ServedTools;
  /** Search mode's index, shared by every request's server; undefined in the other modes. */
  search?: CatalogSearch;
  log: Log;
  /** Start describing the left-out tools again: call it once the bridge answers. */
  retry(): Retries;
}

/** Describe every tool (rejecting with a StartupError when one cannot be served) and prepare the search index. */
export async function startServing(entries: readonly ToolEntry[], options: ServingOptions): Promise<Serving> {
  const log = options.log ?? stderrLog;
  const leftOut: ToolEntry[] = [];
  // One defaults object for the tools served now and those described again later: one warm cap.
  const shared = { ...options, defaults: options.defaults ?? {}, log };
  const served = new ServedTools(await describeTools(entries, { ...shared, onLeftOut: (entry) => leftOut.push(entry) }));
  // Search mode: the index is ready before the first request.
  const search = options.catalog === 'search' ? new CatalogSearch(options.searchEmbeddings, log, options.searchCatalogs) : undefined;
  await search?.prepare(served.current);
  return { served, search, log, retry: () => retryLeftOut(leftOut, served, shared) };
}
