/**
 * The search flags every consumer shares (`twylt-mcp --catalog search`, `twylt search`), and
 * how they become the embeddings options. No search code is loaded by these.
 */
import { UsageError } from '../args.js';
import { parseDuration, type OptionSpec } from '../option-spec.js';

/** Results of a search when none is asked for, and the most that may be. */
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 20;

/** How long a request's embedding may take before lexical results are given instead. */
export const DEFAULT_QUERY_TIMEOUT_MS = 1000;

/** What `twylt_search` takes, for the model. */
export interface SearchInput {
  query: string;
  limit?: number;
  category?: string;
}

/** The input schema of `twylt_search`, one for the bridge's MCP tool and twylt-ai's AI SDK tool. */
export const SEARCH_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    query: { type: 'string', description: 'What you want to do, in plain words.' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT, description: `At most this many tools (default ${DEFAULT_SEARCH_LIMIT}).` },
    category: { type: 'string', description: 'Only tools in this category and below it.' },
  },
  required: ['query'],
  additionalProperties: false,
} as const;

/** The environment variable that holds the embeddings endpoint's API key (never a flag: argv is visible to every user). */
export const SEARCH_KEY_ENV = 'TWYLT_SEARCH_API_KEY';

export const SEARCH_OPTIONS = {
  'search-embeddings': {
    type: 'string',
    value: 'URL',
    help: `rank by meaning too: an OpenAI-compatible embeddings endpoint (http://127.0.0.1:11434/v1 for Ollama, or its /v1/embeddings URL), fused with the lexical ranks; its key, if any, in ${SEARCH_KEY_ENV}; when it fails, lexical results are given`,
  },
  'search-model': { type: 'string', value: 'NAME', help: 'the embedding model to ask the endpoint for (needed with --search-embeddings)' },
  'search-timeout-ms': { type: 'string', value: 'MS', help: "how long a request's embedding may take before lexical results are given instead", byDefault: DEFAULT_QUERY_TIMEOUT_MS },
  'search-cache': { type: 'string', value: 'DIR', help: 'where tool vectors are kept between runs (default $XDG_CACHE_HOME/twylt/embeddings or ~/.cache/twylt/embeddings)' },
} as const satisfies Record<string, OptionSpec>;

export interface EmbeddingsFlags {
  url: string;
  model: string;
  apiKey?: string;
  queryTimeoutMs?: number;
  cacheDir?: string;
}

/** The embeddings asked for by the flags, or undefined; a usage error for an incomplete set. */
export function embeddingsFromFlags(values: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): EmbeddingsFlags | undefined {
  const url = values['search-embeddings'] as string | undefined;
  const model = values['search-model'] as string | undefined;
  const timeout = values['search-timeout-ms'] as string | undefined;
  const cacheDir = values['search-cache'] as string | undefined;
  if (url === undefined) {
    const stray = ['search-model', 'search-timeout-ms', 'search-cache'].find((name) => values[name] !== undefined);
    if (stray) throw new UsageError(`--${stray} needs --search-embeddings URL`);
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--search-embeddings: ${JSON.stringify(url)} is not a URL (such as http://127.0.0.1:11434/v1)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--search-embeddings: an http or https URL, got ${JSON.stringify(url)}`);
  if (!model) throw new UsageError('--search-embeddings needs --search-model NAME (the embedding model, such as nomic-embed-text)');
  const apiKey = env[SEARCH_KEY_ENV] || undefined;
  return { url, model, apiKey, queryTimeoutMs: timeout === undefined ? undefined : parseDuration('--search-timeout-ms', timeout), cacheDir };
}
