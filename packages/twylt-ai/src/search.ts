/**
 * A big catalog for an agent: find its tools by what they do (`searchTools`), or hand the
 * model a search + call pair (`twyltSearchTools`) instead of every tool's schema, as
 * twylt-mcp's search mode does. The ranking is twylt/search's, the one of every consumer,
 * loaded only when a search is made.
 */
import { jsonSchema, type Tool } from 'ai';
import { SEARCH_INPUT_SCHEMA, categoryOf, type EmbeddingsFlags, type SearchInput, type ToolEntryLike } from 'twylt/toolset';
import type { ToolCard, ToolSearch } from 'twylt/search';
import { agentTools, type AgentTool, type AgentToolsOptions } from './agent-tools.js';
import { aiTool, type TwyltExecuteOptions } from './ai-sdk.js';

export type { ToolCard };

export interface SearchToolsOptions {
  /** At most this many (1 to 20, default 5). */
  limit?: number;
  /** Only tools in this category or below it. */
  category?: string;
  /** Rank by meaning too, through an OpenAI-compatible embeddings endpoint (key: `apiKey`). */
  embeddings?: EmbeddingsFlags;
}

/** One index per tool list (and embeddings endpoint), built at its first search. */
const indexes = new WeakMap<readonly AgentTool[], Map<string, Promise<ToolSearch>>>();

async function indexOf(tools: readonly AgentTool[], embeddings: EmbeddingsFlags | undefined): Promise<ToolSearch> {
  let byEndpoint = indexes.get(tools);
  if (!byEndpoint) indexes.set(tools, (byEndpoint = new Map()));
  const key = embeddings ? `${embeddings.url}\n${embeddings.model}` : '';
  let index = byEndpoint.get(key);
  if (!index) {
    index = (async () => {
      const { Embedder, ToolSearch, searchableTool } = await import('twylt/search');
      const search = new ToolSearch(
        tools.map((tool) => searchableTool(tool.name, tool.spec, categoryOf(tool.runner.entry))),
        { embedder: embeddings && new Embedder(embeddings) },
      );
      await search.ready();
      return search;
    })();
    byEndpoint.set(key, index);
  }
  return index;
}

/** The tools of `tools` that best fit `query`, best first, as twylt_search returns them. */
export async function searchTools(tools: readonly AgentTool[], query: string, options: SearchToolsOptions = {}): Promise<ToolCard[]> {
  const [index, { toolCards }] = await Promise.all([indexOf(tools, options.embeddings), import('twylt/search')]);
  const { hits } = await index.search(query, { limit: options.limit, category: options.category });
  return toolCards(hits);
}

export interface TwyltSearchToolsOptions extends AgentToolsOptions {
  /** Rank by meaning too (see SearchToolsOptions). */
  embeddings?: EmbeddingsFlags;
}

type CallInput = { name: string; arguments?: Record<string, unknown> };

export interface TwyltSearchPair {
  /** Finds tools: {"query", "limit"?, "category"?} gives {"tools": [{name, category, description, inputSchema, score}]}. */
  twylt_search: Omit<Tool<SearchInput, { tools: ToolCard[] }>, 'execute'> & { execute(input: SearchInput, options?: TwyltExecuteOptions): Promise<{ tools: ToolCard[] }> };
  /** Runs one: {"name", "arguments"} gives the tool's output; a wrong name or arguments is a tool error the model reads. */
  twylt_call: Omit<Tool<CallInput, unknown>, 'execute'> & { execute(input: CallInput, options?: TwyltExecuteOptions): Promise<unknown> };
  /** The tools behind the pair (to close their warm processes, or to search them yourself). */
  tools: AgentTool[];
}

/**
 * Two AI SDK tools for a catalog of any size: describe every entry once, then let the model
 * search and call. Put `twylt_search` and `twylt_call` in your tool set.
 */
export async function twyltSearchTools(entries: readonly ToolEntryLike[] | readonly AgentTool[], options: TwyltSearchToolsOptions = {}): Promise<TwyltSearchPair> {
  const tools = isAgentTools(entries) ? [...entries] : await agentTools(entries, options, true);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const runners = new Map<string, ReturnType<typeof aiTool>>();
  const twylt_search = {
    description:
      'Find the tools that fit a task, best first, each with its name, category, description and inputSchema. Describe the task in plain words; then run one with twylt_call.',
    inputSchema: jsonSchema<SearchInput>(structuredClone(SEARCH_INPUT_SCHEMA) as unknown as Parameters<typeof jsonSchema>[0]),
    execute: async ({ query, limit, category }: SearchInput) => ({
      tools: await searchTools(tools, query, { limit, category, embeddings: options.embeddings }),
    }),
  };
  const twylt_call = {
    description: "Run one tool, by the name twylt_search showed, with arguments that match its inputSchema. Returns the tool's result.",
    inputSchema: jsonSchema<{ name: string; arguments?: Record<string, unknown> }>({
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The name of a tool listed by twylt_search.' },
        arguments: { type: 'object', description: "The tool's arguments, matching its inputSchema.", additionalProperties: true },
      },
      required: ['name'],
      additionalProperties: false,
    }),
    execute: async ({ name, arguments: args = {} }: { name: string; arguments?: Record<string, unknown> }, callOptions?: TwyltExecuteOptions) => {
      const tool = byName.get(name);
      if (!tool) throw new Error(`There is no tool named ${JSON.stringify(name)}. Call twylt_search to find the tools and their names.`);
      const issues = tool.check(args);
      if (issues.length > 0) {
        const { issueLines } = await import('twylt/toolset');
        throw new Error(`the arguments break the inputSchema of "${name}":\n${issueLines(issues)}`);
      }
      const runner = runners.get(name) ?? aiTool(tool);
      runners.set(name, runner);
      return runner.execute(args, callOptions);
    },
  };
  return { twylt_search, twylt_call, tools } as TwyltSearchPair;
}

function isAgentTools(entries: readonly ToolEntryLike[] | readonly AgentTool[]): entries is readonly AgentTool[] {
  return entries.length > 0 && typeof (entries[0] as AgentTool).run === 'function';
}
