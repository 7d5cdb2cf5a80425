/**
 * Search mode (`--catalog search`): a catalog of any size behind two MCP tools. `twylt_search`
 * finds the tools that fit a request (twylt/search: lexical by default, fused with an
 * embeddings endpoint's ranks when one is given) and returns them with their input schemas,
 * so the model can call one at once; `twylt_call` is browse mode's, the same call path.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { SEARCH_INPUT_SCHEMA, categoryOf, jsonKind, type EmbeddingsFlags } from 'twylt/toolset';
import type { ToolSearch } from 'twylt/search';
import { CALL_TOOL, callToolDefinition } from './catalog.js';
import { successResult } from './result.js';
import type { Log } from './log.js';
import type { BridgeTool } from './tools.js';

export const SEARCH_TOOL = 'twylt_search';

/** How long the start waits for the tools' vectors (a cache hit takes milliseconds). */
const VECTORS_WAIT_MS = 5000;

/** The two MCP tools of search mode (their listing, with the instructions, stays under 2 KiB). */
export const SEARCH_TOOLS: Tool[] = [
  {
    name: SEARCH_TOOL,
    description:
      'Find the tools of this catalog that fit a task, best first, each with its name, category, description and inputSchema. ' +
      'Describe the task in plain words ("open a pull request", "weather in Paris tomorrow"). Then run one with twylt_call.',
    // One schema for every consumer's twylt_search (a copy: the SDK's Tool type is mutable).
    inputSchema: structuredClone(SEARCH_INPUT_SCHEMA) as unknown as Tool['inputSchema'],
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  callToolDefinition(SEARCH_TOOL),
];

export function searchInstructions(size: number): string {
  return (
    `This server is a catalog of ${size} tools behind two MCP tools. To do a task, first call ${SEARCH_TOOL} with the task in ` +
    `plain words: it returns the best-fitting tools with the JSON Schema of their arguments. Then call ${CALL_TOOL} with ` +
    `{"name": TOOL, "arguments": {...}}. If no tool fits, search again with other words.`
  );
}

/** The searches of one bridge: one index per tool set (the set grows when a left-out tool joins). */
export class CatalogSearch {
  private readonly indexes = new WeakMap<readonly BridgeTool[], Promise<ToolSearch<IndexedTool>>>();
  private embedder: Promise<import('twylt/search').Embedder | undefined> | undefined;

  constructor(
    private readonly embeddings: EmbeddingsFlags | undefined,
    private readonly log: Log,
    /** The --config catalogs: the index stored beside one (`twylt scan --write`) is used when it was built from these tools. */
    private readonly catalogs: readonly string[] = [],
  ) {}

  /**
   * Build the index of `tools` before the first request, and give the embedding of the tools
   * (from the cache, or the endpoint) a few seconds; beyond, it goes on in the background and
   * searches are lexical until it is done.
   */
  async prepare(tools: readonly BridgeTool[]): Promise<void> {
    const index = await this.indexOf(tools);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([index.ready(), new Promise((resolve) => (timer = setTimeout(resolve, VECTORS_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /** The answer of twylt_search over `tools`, those `accept` refuses left out. */
  async run(tools: readonly BridgeTool[], args: Record<string, unknown>, accept?: (name: string) => boolean): Promise<CallToolResult> {
    const extra = Object.keys(args).filter((key) => key !== 'query' && key !== 'limit' && key !== 'category');
    if (extra.length > 0) return refusal(`${SEARCH_TOOL} takes {"query": TEXT, "limit"?: 1-20, "category"?: TEXT}; it does not take ${extra.map((key) => JSON.stringify(key)).join(', ')}.`);
    const { query, limit, category } = args;
    if (typeof query !== 'string' || query.trim() === '') return refusal(`"query" must be a non-empty string, the task in plain words; got ${jsonKind(query)}.`);
    if (limit !== undefined && !(typeof limit === 'number' && Number.isInteger(limit) && limit >= 1 && limit <= 20)) {
      return refusal(`"limit" must be a whole number from 1 to 20; got ${typeof limit === 'number' ? limit : jsonKind(limit)}.`);
    }
    if (category !== undefined && typeof category !== 'string') return refusal(`"category" must be a string; got ${jsonKind(category)}.`);
    const [index, { toolCards }] = await Promise.all([this.indexOf(tools), import('twylt/search')]);
    const { hits } = await index.search(query, { limit, category, accept });
    const found = toolCards(hits);
    return successResult({ tools: found });
  }

  private indexOf(tools: readonly BridgeTool[]): Promise<ToolSearch<IndexedTool>> {
    let index = this.indexes.get(tools);
    if (!index) {
      index = (async () => {
        const [{ ToolSearch, findStoredIndex, storedIndexFile }, embedder] = await Promise.all([import('twylt/search'), this.embedderOf()]);
        const searchable = tools.map(indexed);
        const stored = await findStoredIndex(this.catalogs.map(storedIndexFile), searchable, this.log);
        return new ToolSearch(searchable, { embedder, log: this.log, index: stored });
      })();
      this.indexes.set(tools, index);
    }
    return index;
  }

  /** One embedder (and so one vector cache) for every tool set of this bridge. */
  private embedderOf(): Promise<import('twylt/search').Embedder | undefined> {
    this.embedder ??= (async () => {
      if (!this.embeddings) return undefined;
      const { Embedder } = await import('twylt/search');
      return new Embedder(this.embeddings);
    })();
    return this.embedder;
  }
}

type IndexedTool = ReturnType<typeof indexed>;

function indexed(tool: BridgeTool) {
  const { name, description, inputSchema, outputSchema } = tool.definition;
  return { name, description: description ?? '', category: categoryOf(tool.runner.entry), inputSchema, outputSchema, examples: tool.examples };
}

function refusal(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}
