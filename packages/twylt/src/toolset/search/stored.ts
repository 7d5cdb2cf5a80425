/**
 * The search index stored beside a catalog (`twylt scan --write catalog.json` writes
 * catalog.search-index.json), so a bridge in search mode starts without analysing every
 * tool. It is keyed by a hash of what the index is built from: every tool's searched text,
 * in order, and the ranking (weights, analyzer version). An index made for other tools, other
 * descriptions or another ranking is not used; nor is one that cannot be read (a warning):
 * the index is then built, as without a file.
 */
import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { searchDocument, type SearchableTool, type SearchDocument } from './document.js';
import { LexicalIndex, RANKING_KEY, type LexicalIndexData } from './lexical.js';

const FORMAT = 'twylt-search-index';

/** Where the index of the catalog `file` is stored: `catalog.json` gives `catalog.search-index.json`. */
export function storedIndexFile(catalog: string): string {
  return `${catalog.replace(/\.json$/i, '')}.search-index.json`;
}

/** What the index of `documents` is built from, as one hash: a stored index is used only under the same key. */
export function searchIndexKey(documents: readonly SearchDocument[]): string {
  const hash = createHash('sha256').update(RANKING_KEY);
  for (const { fields } of documents) hash.update('\u0000').update(JSON.stringify(fields));
  return hash.digest('hex');
}

/** Build the index of `tools` and store it in `file`, whole or not at all. */
export async function writeStoredIndex(file: string, tools: readonly SearchableTool[]): Promise<void> {
  const documents = tools.map(searchDocument);
  const data = new LexicalIndex(documents).data();
  const stored = {
    format: FORMAT,
    key: searchIndexKey(documents),
    size: data.size,
    terms: data.terms,
    idf: data.idf,
    counts: data.counts,
    docs: Buffer.from(data.docs.buffer, data.docs.byteOffset, data.docs.byteLength).toString('base64'),
    weights: Buffer.from(data.weights.buffer, data.weights.byteOffset, data.weights.byteLength).toString('base64'),
  };
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify(stored));
  await rename(temporary, file);
}

export type StoredIndexResult =
  | { index: LexicalIndex; file: string }
  | { index: undefined; reason: 'missing' | 'stale' | 'corrupt'; detail: string };

/** The index stored in `file` when it was built from `documents` by this ranking. */
export async function readStoredIndex(file: string, documents: readonly SearchDocument[]): Promise<StoredIndexResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { index: undefined, reason: 'missing', detail: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  }
  let stored: Record<string, unknown>;
  try {
    stored = JSON.parse(text);
    if (stored === null || typeof stored !== 'object' || stored.format !== FORMAT) throw new Error(`not a ${FORMAT} file`);
  } catch (error) {
    return { index: undefined, reason: 'corrupt', detail: (error as Error).message };
  }
  if (stored.key !== searchIndexKey(documents)) return { index: undefined, reason: 'stale', detail: 'built from other tools, descriptions or ranking' };
  try {
    return { index: new LexicalIndex(checked(stored, documents.length)), file };
  } catch (error) {
    return { index: undefined, reason: 'corrupt', detail: (error as Error).message };
  }
}

/** The stored data, every array the length the others say: a bad file must not index out of bounds. */
function checked(stored: Record<string, unknown>, size: number): LexicalIndexData {
  const { terms, idf, counts, docs, weights } = stored;
  if (stored.size !== size) throw new Error(`it holds ${String(stored.size)} tools, not ${size}`);
  const strings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');
  const numbers = (value: unknown): value is number[] => Array.isArray(value) && value.every((item) => typeof item === 'number' && Number.isFinite(item) && item >= 0);
  if (!strings(terms) || !numbers(idf) || !numbers(counts) || typeof docs !== 'string' || typeof weights !== 'string') throw new Error('a field is missing or of the wrong type');
  if (idf.length !== terms.length || counts.length !== terms.length) throw new Error('its terms, idf and counts differ in length');
  const total = counts.reduce((sum, count) => sum + count, 0);
  const docBytes = Buffer.from(docs, 'base64');
  const weightBytes = Buffer.from(weights, 'base64');
  if (docBytes.length !== total * 4 || weightBytes.length !== total * 4) throw new Error('its posting lists are cut short');
  // Copied into aligned buffers of their own (a decoded Buffer may share a pool at any offset).
  const docList = new Uint32Array(total);
  new Uint8Array(docList.buffer).set(docBytes);
  const weightList = new Float32Array(total);
  new Uint8Array(weightList.buffer).set(weightBytes);
  for (const doc of docList) if (doc >= size) throw new Error('a posting names a tool beyond the catalog');
  for (let i = 1; i < terms.length; i++) if (terms[i - 1] >= terms[i]) throw new Error('its terms are not sorted');
  return { size, terms, idf, counts, docs: docList, weights: weightList };
}

/**
 * The first of `files` that holds the index of `tools`, else undefined; says on `log` which
 * one is used, and why one that exists is not (a corrupt one as a warning). A missing file is
 * no news: most tool sets have none.
 */
export async function findStoredIndex(files: readonly string[], tools: readonly SearchableTool[], log: (line: string) => void): Promise<LexicalIndex | undefined> {
  if (files.length === 0) return undefined;
  const documents = tools.map(searchDocument);
  for (const file of files) {
    const found = await readStoredIndex(file, documents);
    if (found.index) {
      log(`search: index of ${tools.length} tools read from ${file}`);
      return found.index;
    }
    if (found.reason === 'corrupt') log(`warning: search: ${file} cannot be used (${found.detail}); the index is built instead`);
    else if (found.reason === 'stale') log(`search: ${file} is out of date (${found.detail}); the index is built instead`);
  }
  return undefined;
}
