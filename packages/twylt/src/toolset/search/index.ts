/**
 * twylt/search: find the tools of a catalog by what they do. One implementation for every
 * consumer (twylt-mcp's search mode, `twylt search`, the inspect page, twylt-ai); a tool never
 * loads it.
 *
 *   const search = new ToolSearch([{ name: 'list_issues', description: 'List the issues of a repository' }]);
 *   const { hits } = await search.search('open tickets', { limit: 5 });
 *
 * Lexical by default (lexical.ts: offline, in-process, nothing to download); with an
 * embeddings endpoint, lexical and semantic ranks are fused by reciprocal rank fusion, and
 * any failure of the endpoint gives the lexical ranks instead (ADR: docs/adr).
 */
import type { JsonSpec } from '../../protocol/spec.js';
import { DEFAULT_CATEGORY, inCategory } from '../category.js';
import { searchChannel, traced, type SearchMessage } from '../../events/channels.js';
import { embeddingText, searchDocument, type SearchableTool } from './document.js';
import { dot, type Embedder, EmbeddingsTimeoutError } from './embeddings.js';
import { LexicalIndex, type LexicalIndexOptions } from './lexical.js';

export { searchDocument, embeddingText, type SearchableTool, type SearchDocument } from './document.js';
export { LexicalIndex, FIELD_WEIGHTS, EXPANSION_WEIGHTS, RANKING_KEY, type LexicalHit, type LexicalIndexOptions, type LexicalIndexData } from './lexical.js';
export { Embedder, EmbeddingsTimeoutError, DEFAULT_QUERY_TIMEOUT_MS, defaultCacheDir, type EmbeddingsOptions } from './embeddings.js';
export { terms, words } from './analyze.js';
export { storedIndexFile, writeStoredIndex, readStoredIndex, findStoredIndex, searchIndexKey, type StoredIndexResult } from './stored.js';
export { stem } from './stem.js';

export { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from './options.js';
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from './options.js';
/** Reciprocal rank fusion's constant (Cormack et al., 2009): 1 / (K + rank). */
const RRF_K = 60;
/** Ranks each ranking hands to the fusion. */
const FUSION_DEPTH = 50;
/** After tool vectors failed, wait this long before asking for them again. */
const VECTOR_RETRY_MS = 30_000;

export interface SearchOptions {
  /** At most this many (default 5). */
  limit?: number;
  /** Only tools in this category or below it (`git` holds `git/history`). */
  category?: string;
  /** Only the tools it accepts (a caller's scopes): the others do not exist for this search. */
  accept?: (name: string) => boolean;
}

export interface SearchHit<T extends SearchableTool = SearchableTool> {
  tool: T;
  /** Higher is better: a BM25F score, or a fused one (hybrid). */
  score: number;
}

export interface SearchResult<T extends SearchableTool = SearchableTool> {
  hits: SearchHit<T>[];
  ranking: 'lexical' | 'hybrid';
  /** Why embeddings were asked for and not used (the hits are lexical). */
  fallback?: 'timeout' | 'error' | 'pending';
}

export interface ToolSearchOptions {
  /** Rank by meaning too, through this endpoint (shared by the tool sets of one consumer). */
  embedder?: Embedder;
  /** Where a fallback to lexical ranks is reported. */
  log?: (line: string) => void;
  /** Tuning of the lexical index (the benchmark compares variants). */
  lexical?: LexicalIndexOptions;
  /** The lexical index of these tools, already built (a stored one: stored.ts); built here when absent. */
  index?: LexicalIndex;
}

/** The search over one set of tools: built once per set (in about 0.1 ms a tool). */
export class ToolSearch<T extends SearchableTool = SearchableTool> {
  readonly tools: readonly T[];
  private readonly lexical: LexicalIndex;
  private readonly embedder: Embedder | undefined;
  private readonly log: (line: string) => void;
  private vectors: Float32Array[] | undefined;
  private vectorsPending: Promise<void> | undefined;
  private vectorsFailedAt = Number.NEGATIVE_INFINITY;

  constructor(tools: readonly T[], options: ToolSearchOptions = {}) {
    this.tools = tools;
    this.lexical = options.index?.size === tools.length ? options.index : new LexicalIndex(tools.map(searchDocument), options.lexical);
    this.embedder = options.embedder;
    this.log = options.log ?? (() => {});
    if (this.embedder) this.prepareVectors();
  }

  /** Resolves once the tool vectors are ready (or failed); at once without embeddings. */
  async ready(): Promise<void> {
    await this.vectorsPending;
  }

  /** The best tools for `query`, best first; never rejects for the endpoint's sake. */
  search(query: string, options: SearchOptions = {}): Promise<SearchResult<T>> {
    const message: SearchMessage = { ranking: this.embedder ? 'hybrid' : 'lexical' };
    return traced(
      searchChannel,
      () => message,
      async () => {
        const result = await this.rank(query, options);
        message.ranking = result.ranking;
        message.results = result.hits.length;
        if (result.fallback) message.fallback = result.fallback;
        return result;
      },
    );
  }

  /** Lexical ranks alone, at once (no endpoint, no channel). */
  searchLexical(query: string, options: SearchOptions = {}): SearchResult<T> {
    const limit = clampLimit(options.limit);
    const accept = this.acceptor(options);
    const hits = this.lexical.search(query, limit, accept).map(({ index, score }) => ({ tool: this.tools[index], score: round(score) }));
    return { hits, ranking: 'lexical' };
  }

  private async rank(query: string, options: SearchOptions): Promise<SearchResult<T>> {
    const { embedder } = this;
    if (!embedder) return this.searchLexical(query, options);
    const fallback = (reason: 'timeout' | 'error' | 'pending', detail?: string): SearchResult<T> => {
      if (detail) this.log(`search: embeddings ${reason} (${detail}); lexical results given`);
      return { ...this.searchLexical(query, options), fallback: reason };
    };
    if (!this.vectors) {
      this.prepareVectors();
      return fallback('pending');
    }
    let queryVector: Float32Array;
    try {
      queryVector = await embedder.queryVector(query);
    } catch (error) {
      return fallback(error instanceof EmbeddingsTimeoutError ? 'timeout' : 'error', (error as Error).message);
    }
    const { vectors } = this;
    if (queryVector.length !== vectors[0]?.length) return fallback('error', 'the request\'s vector and the tools\' differ in size');
    const limit = clampLimit(options.limit);
    const accept = this.acceptor(options);
    const lexical = this.lexical.search(query, FUSION_DEPTH, accept).map(({ index }) => index);
    const semantic: Array<{ index: number; similarity: number }> = [];
    vectors.forEach((vector, index) => {
      if (!accept || accept(index)) semantic.push({ index, similarity: dot(queryVector, vector) });
    });
    semantic.sort((a, b) => b.similarity - a.similarity || a.index - b.index);
    const fused = new Map<number, number>();
    const add = (ranks: readonly number[]) => ranks.forEach((index, rank) => fused.set(index, (fused.get(index) ?? 0) + 1 / (RRF_K + rank + 1)));
    add(lexical);
    add(semantic.slice(0, FUSION_DEPTH).map(({ index }) => index));
    const hits = [...fused]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, limit)
      .map(([index, score]) => ({ tool: this.tools[index], score: Math.round(score * 10_000) / 10_000 }));
    return { hits, ranking: 'hybrid' };
  }

  private acceptor(options: SearchOptions): ((index: number) => boolean) | undefined {
    const { category, accept } = options;
    if (category === undefined && !accept) return undefined;
    return (index) => {
      const tool = this.tools[index];
      return (category === undefined || inCategory(tool.category ?? '', category)) && (!accept || accept(tool.name));
    };
  }

  /** Compute the tool vectors in the background, unless under way or failed a short while ago. */
  private prepareVectors(): void {
    const { embedder } = this;
    if (!embedder || this.vectors || this.vectorsPending || performance.now() - this.vectorsFailedAt < VECTOR_RETRY_MS) return;
    this.vectorsPending = embedder
      .vectorsOf(this.tools.map(embeddingText))
      .then((vectors) => {
        this.vectors = vectors;
      })
      .catch((error: Error) => {
        this.vectorsFailedAt = performance.now();
        this.log(`search: cannot embed the tools (${error.message}); lexical results until it works`);
      })
      .finally(() => {
        this.vectorsPending = undefined;
      });
  }
}

/** What a search shows of each tool found: enough to call it at once, without another look-up. */
export interface ToolCard {
  name: string;
  category: string;
  description: string;
  inputSchema: Record<string, unknown>;
  score: number;
}

export function toolCards(hits: readonly SearchHit[]): ToolCard[] {
  return hits.map(({ tool, score }) => ({
    name: tool.name,
    category: tool.category ?? DEFAULT_CATEGORY,
    description: tool.description ?? '',
    inputSchema: tool.inputSchema ?? { type: 'object' },
    score,
  }));
}

/** A described tool as a search sees it: its spec, under the name and category it is served with. */
export function searchableTool(name: string, spec: Pick<JsonSpec, 'description' | 'inputSchema' | 'outputSchema' | 'few_shots'>, category: string): SearchableTool {
  return {
    name,
    description: typeof spec.description === 'string' ? spec.description : '',
    category,
    inputSchema: spec.inputSchema,
    outputSchema: spec.outputSchema,
    examples: Array.isArray(spec.few_shots) ? spec.few_shots.map((shot) => shot?.input) : [],
  };
}

export function clampLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_SEARCH_LIMIT;
  return Math.max(1, Math.min(MAX_SEARCH_LIMIT, Math.floor(limit)));
}

function round(score: number): number {
  return Math.round(score * 1000) / 1000;
}
