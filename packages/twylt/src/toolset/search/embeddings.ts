/**
 * Ranking by meaning, when the operator runs a model: an OpenAI-compatible `/v1/embeddings`
 * endpoint (Ollama, TEI, vLLM, LM Studio, OpenAI). Tool vectors are computed once and kept in
 * a cache folder, one file per model, each vector under the hash of the text it embeds: a
 * restart, or a catalog that gained one tool, asks the endpoint only for what it has not seen.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_QUERY_TIMEOUT_MS } from './options.js';

export interface EmbeddingsOptions {
  /** The endpoint: a base URL (`http://127.0.0.1:11434/v1`) or the full `.../v1/embeddings`. */
  url: string;
  /** The model the endpoint is asked for (`model` of the request). */
  model: string;
  /** Sent as `Authorization: Bearer KEY` (OpenAI; most local servers need none). */
  apiKey?: string;
  /** How long a request's embedding may take before lexical results are given instead (default 1000 ms). */
  queryTimeoutMs?: number;
  /** How long one batch of tool texts may take (default 60000 ms). */
  batchTimeoutMs?: number;
  /** Where tool vectors are kept (default `$XDG_CACHE_HOME/twylt/embeddings`, else `~/.cache/twylt/embeddings`). */
  cacheDir?: string;
  /** Texts per request when embedding the tools (default 64). */
  batchSize?: number;
}

export { DEFAULT_QUERY_TIMEOUT_MS };
const DEFAULT_BATCH_TIMEOUT_MS = 60_000;
const DEFAULT_BATCH_SIZE = 64;

/** The endpoint did not answer in time (the search falls back to lexical). */
export class EmbeddingsTimeoutError extends Error {
  constructor(ms: number) {
    super(`the embeddings endpoint did not answer within ${ms} ms`);
    this.name = 'EmbeddingsTimeoutError';
  }
}

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'twylt', 'embeddings');
}

export class Embedder {
  readonly options: EmbeddingsOptions;
  private readonly endpoint: string;
  private readonly cacheFile: string;
  private cache: Map<string, Float32Array> | undefined;
  /** Endpoint calls made, for tests and the benchmark (a warm restart makes none for the tools). */
  calls = 0;

  constructor(options: EmbeddingsOptions) {
    this.options = options;
    const base = options.url.replace(/\/+$/, '');
    this.endpoint = /\/embeddings$/.test(base) ? base : `${base}/embeddings`;
    const key = createHash('sha256').update(options.model).digest('hex').slice(0, 16);
    this.cacheFile = join(options.cacheDir ?? defaultCacheDir(), `${key}.json`);
  }

  /** Unit vectors of `texts` (tool texts): from the cache, the others asked for in batches and cached. */
  async vectorsOf(texts: readonly string[]): Promise<Float32Array[]> {
    const cache = await this.loadCache();
    const hashes = texts.map(textHash);
    const missing = [...new Set(hashes.filter((hash) => !cache.has(hash)))];
    if (missing.length > 0) {
      const byHash = new Map(texts.map((text, i) => [hashes[i], text]));
      const size = this.options.batchSize ?? DEFAULT_BATCH_SIZE;
      for (let start = 0; start < missing.length; start += size) {
        const batch = missing.slice(start, start + size);
        const vectors = await this.embed(batch.map((hash) => byHash.get(hash) as string), this.options.batchTimeoutMs ?? DEFAULT_BATCH_TIMEOUT_MS);
        batch.forEach((hash, i) => cache.set(hash, vectors[i]));
      }
      await this.saveCache(cache);
    }
    return hashes.map((hash) => cache.get(hash) as Float32Array);
  }

  /** The unit vector of a request; rejects after the query time-out. */
  async queryVector(text: string): Promise<Float32Array> {
    const [vector] = await this.embed([text], this.options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS);
    return vector;
  }

  private async embed(input: string[], timeoutMs: number): Promise<Float32Array[]> {
    this.calls++;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new EmbeddingsTimeoutError(timeoutMs)), timeoutMs);
    try {
      const response = await fetch(this.endpoint, { method: 'POST', headers, body: JSON.stringify({ model: this.options.model, input }), signal: controller.signal });
      if (!response.ok) throw new Error(`the embeddings endpoint answered HTTP ${response.status}`);
      const body = (await response.json()) as { data?: Array<{ embedding?: unknown; index?: number }> };
      if (!Array.isArray(body?.data) || body.data.length !== input.length) throw new Error('the embeddings endpoint answered without one embedding per input');
      const vectors: Float32Array[] = new Array(input.length);
      body.data.forEach((item, position) => {
        const { embedding } = item;
        if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) {
          throw new Error('the embeddings endpoint answered an embedding that is not a list of numbers');
        }
        vectors[typeof item.index === 'number' ? item.index : position] = unit(Float32Array.from(embedding as number[]));
      });
      if (vectors.some((vector) => vector === undefined || vector.length !== vectors[0].length)) throw new Error('the embeddings endpoint answered vectors of different sizes');
      return vectors;
    } catch (error) {
      if (controller.signal.aborted && controller.signal.reason instanceof EmbeddingsTimeoutError) throw controller.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private async loadCache(): Promise<Map<string, Float32Array>> {
    if (this.cache) return this.cache;
    const cache = new Map<string, Float32Array>();
    try {
      const stored = JSON.parse(await readFile(this.cacheFile, 'utf8')) as { model?: string; vectors?: Record<string, string> };
      if (stored.model === this.options.model && stored.vectors) {
        for (const [hash, base64] of Object.entries(stored.vectors)) {
          const bytes = Buffer.from(base64, 'base64');
          cache.set(hash, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
        }
      }
    } catch {
      // No cache yet, or an unreadable one: it is written again.
    }
    this.cache = cache;
    return cache;
  }

  /** Written to a temporary file and renamed: a reader never sees half a cache. */
  private async saveCache(cache: Map<string, Float32Array>): Promise<void> {
    const vectors: Record<string, string> = {};
    for (const [hash, vector] of cache) vectors[hash] = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
    const dir = join(this.cacheFile, '..');
    await mkdir(dir, { recursive: true });
    const temporary = `${this.cacheFile}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify({ model: this.options.model, vectors }));
    await rename(temporary, this.cacheFile);
  }
}

/** The cache key of a text: its SHA-256, so the cache holds no tool's text. */
function textHash(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

function unit(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}

export function dot(a: Float32Array, b: Float32Array): number {
  const n = Math.min(a.length, b.length);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += a[i] * b[i];
  return sum;
}
