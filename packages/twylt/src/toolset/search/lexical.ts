/**
 * The lexical ranking: BM25F (BM25 over weighted fields) over everything a tool says about
 * itself, with the request's words expanded by what people mean by them: other endings
 * (stemming), longer words they begin (`crypto`, `cryptocurrency`), words written together
 * (`air quality`, `airquality`), the usual synonyms of tool catalogs, and one typo.
 *
 * A term's weight in a tool does not depend on the request, so it is worked out once when
 * the index is built; a request then only adds up a few posting lists.
 */
import { joinedIdentifier, term, terms, words } from './analyze.js';
import type { SearchDocument } from './document.js';
import { synonymsOf } from './synonyms.js';

/** How much a match in each field counts; a name or description counts more than a property. */
export const FIELD_WEIGHTS = {
  name: 3,
  description: 1.5,
  category: 1.2,
  properties: 1,
  details: 0.5,
  examples: 0.3,
} as const satisfies Record<keyof SearchDocument['fields'], number>;

type Field = keyof typeof FIELD_WEIGHTS;
const FIELDS = Object.keys(FIELD_WEIGHTS) as Field[];

/** BM25's saturation and length normalization (the usual values; short fields, mild b). */
const K1 = 1.2;
const B = 0.5;

/**
 * What an index built by this code depends on beyond the tools' text: a stored index
 * (stored.ts) made under another is built again. Raise RANKING_VERSION whenever the analyzer
 * (stop words, stemming, identifier splitting) changes; the weights are in the key already.
 */
const RANKING_VERSION = 1;
export const RANKING_KEY = JSON.stringify({ version: RANKING_VERSION, fields: FIELD_WEIGHTS, k1: K1, b: B });

/** A built index as plain data: each term's posting list, flat, for a file (stored.ts). */
export interface LexicalIndexData {
  size: number;
  /** Sorted. */
  terms: string[];
  idf: number[];
  /** How many documents each term's posting list holds. */
  counts: number[];
  docs: Uint32Array;
  weights: Float32Array;
}

/** How much an expansion of a request's word counts beside the word itself. */
export const EXPANSION_WEIGHTS = { prefix: 0.6, joined: 1, synonym: 0.5, typo: 0.7 } as const;
/** Words shorter than this are not looked up as a prefix or with a typo: too many false friends. */
const MIN_PREFIX = 4;
const MIN_TYPO = 5;
/** At most this many longer words per prefix, the most frequent first. */
const MAX_PREFIX_TERMS = 8;

export interface LexicalHit {
  /** The document's position in the indexed list. */
  index: number;
  score: number;
}

export interface LexicalIndexOptions {
  fieldWeights?: Partial<Record<Field, number>>;
  /** Off: plain BM25F, the request's words alone (for the benchmark's comparison). */
  expand?: boolean;
}

export class LexicalIndex {
  readonly size: number;
  /** term -> documents holding it and the term's saturated weight in each. */
  private readonly postings = new Map<string, { docs: Uint32Array; weights: Float32Array; idf: number }>();
  /** Every term, sorted, for prefix look-ups. */
  private readonly vocabulary: string[];
  /** Terms by length, for typo look-ups. */
  private readonly byLength = new Map<number, string[]>();
  private readonly expand: boolean;
  /** Scores of one request, reused (requests are answered one at a time). */
  private readonly total: Float32Array;
  private readonly best: Float32Array;
  /** How much of the request each document matched: per word, the weight of its best expansion found there. */
  private readonly matched: Float32Array;
  private readonly bestWeight: Float32Array;

  constructor(documents: readonly SearchDocument[] | LexicalIndexData, options: LexicalIndexOptions = {}) {
    this.expand = options.expand ?? true;
    if (!Array.isArray(documents)) {
      const data = documents as LexicalIndexData;
      this.size = data.size;
      let at = 0;
      data.terms.forEach((t, i) => {
        const count = data.counts[i];
        this.postings.set(t, { docs: data.docs.subarray(at, at + count), weights: data.weights.subarray(at, at + count), idf: data.idf[i] });
        at += count;
        this.addByLength(t);
      });
      this.vocabulary = data.terms;
      this.total = new Float32Array(this.size);
      this.best = new Float32Array(this.size);
      this.matched = new Float32Array(this.size);
      this.bestWeight = new Float32Array(this.size);
      return;
    }
    this.size = documents.length;
    const weights = { ...FIELD_WEIGHTS, ...options.fieldWeights };
    const analysed = documents.map((document) => analyse(document));
    const averages = FIELDS.map((field) => analysed.reduce((sum, doc) => sum + doc[field].length, 0) / Math.max(1, analysed.length) || 1);
    const building = new Map<string, { docs: number[]; weights: number[] }>();
    analysed.forEach((doc, index) => {
      const weighted = new Map<string, number>();
      FIELDS.forEach((field, f) => {
        const fieldTerms = doc[field];
        if (fieldTerms.length === 0) return;
        const norm = 1 - B + (B * fieldTerms.length) / averages[f];
        const counts = new Map<string, number>();
        for (const t of fieldTerms) counts.set(t, (counts.get(t) ?? 0) + 1);
        for (const [t, count] of counts) weighted.set(t, (weighted.get(t) ?? 0) + (weights[field] * count) / norm);
      });
      for (const [t, tf] of weighted) {
        let posting = building.get(t);
        if (!posting) building.set(t, (posting = { docs: [], weights: [] }));
        posting.docs.push(index);
        posting.weights.push(tf / (K1 + tf));
      }
    });
    const n = this.size;
    for (const [t, { docs, weights: w }] of building) {
      const idf = Math.log(1 + (n - docs.length + 0.5) / (docs.length + 0.5));
      this.postings.set(t, { docs: Uint32Array.from(docs), weights: Float32Array.from(w), idf });
      this.addByLength(t);
    }
    this.vocabulary = [...building.keys()].sort();
    this.total = new Float32Array(n);
    this.best = new Float32Array(n);
    this.matched = new Float32Array(n);
    this.bestWeight = new Float32Array(n);
  }

  /** The index as plain data, to be stored and read back (`new LexicalIndex(data)`) without analysing a tool. */
  data(): LexicalIndexData {
    const { vocabulary, postings } = this;
    const counts = vocabulary.map((t) => postings.get(t)!.docs.length);
    const total = counts.reduce((sum, count) => sum + count, 0);
    const docs = new Uint32Array(total);
    const weights = new Float32Array(total);
    let at = 0;
    for (const t of vocabulary) {
      const posting = postings.get(t)!;
      docs.set(posting.docs, at);
      weights.set(posting.weights, at);
      at += posting.docs.length;
    }
    return { size: this.size, terms: vocabulary, idf: vocabulary.map((t) => postings.get(t)!.idf), counts, docs, weights };
  }

  private addByLength(t: string): void {
    let same = this.byLength.get(t.length);
    if (!same) this.byLength.set(t.length, (same = []));
    same.push(t);
  }

  /** The documents that match `query`, best first, at most `limit`, those `accept` refuses left out. */
  search(query: string, limit: number, accept?: (index: number) => boolean): LexicalHit[] {
    const { total, best, matched, bestWeight } = this;
    // The documents scored, each once: `total` above 0 marks them.
    const touched: number[] = [];
    const words = this.expandQuery(query);
    for (const expansions of words) {
      // A word's best expansion counts, not their sum: three synonyms are not three matches.
      const seen: number[] = [];
      for (const [t, weight] of expansions) {
        const posting = this.postings.get(t);
        if (!posting) continue;
        const { docs, weights, idf } = posting;
        const factor = weight * idf;
        for (let i = 0; i < docs.length; i++) {
          const doc = docs[i];
          const score = factor * weights[i];
          if (best[doc] === 0) seen.push(doc);
          if (score > best[doc]) best[doc] = score;
          if (weight > bestWeight[doc]) bestWeight[doc] = weight;
        }
      }
      for (const doc of seen) {
        if (total[doc] === 0) touched.push(doc);
        total[doc] += best[doc];
        matched[doc] += bestWeight[doc];
        bestWeight[doc] = 0;
        best[doc] = 0;
      }
    }
    // The best `limit`, kept sorted as they come: no sort of every match.
    const hits: LexicalHit[] = [];
    for (const index of touched) {
      // Scaled by the share of the request the tool matches (Lucene's coordination factor, a
      // word found through a synonym or a typo counting as much as that expansion weighs): a
      // tool that matches one word of its name strongly ("open" in open_nodes) no longer beats
      // one that matches most of what was asked.
      const score = (total[index] * matched[index]) / words.length;
      total[index] = 0;
      matched[index] = 0;
      if (score <= 0 || (hits.length === limit && score <= hits[limit - 1].score) || (accept && !accept(index))) continue;
      let at = hits.length === limit ? limit - 1 : hits.length;
      if (hits.length < limit) hits.push({ index, score });
      while (at > 0 && (hits[at - 1].score < score || (hits[at - 1].score === score && hits[at - 1].index > index))) {
        hits[at] = hits[at - 1];
        at--;
      }
      hits[at] = { index, score };
    }
    return hits;
  }

  /** Each distinct word of the request with the terms it looks for and their weights. */
  expandQuery(query: string): Array<Map<string, number>> {
    const raw = words(query);
    const out: Array<Map<string, number>> = [];
    const done = new Set<string>();
    raw.forEach((word, position) => {
      const t = term(word);
      if (t === undefined || done.has(t)) return;
      done.add(t);
      const expansions = new Map<string, number>([[t, 1]]);
      const add = (other: string, weight: number) => {
        if ((expansions.get(other) ?? 0) < weight) expansions.set(other, weight);
      };
      if (this.expand) {
        // Written together in a name: "air quality" finds airquality, "git hub" github.
        const next = raw[position + 1];
        if (next !== undefined) {
          const joined = term(word + next);
          if (joined !== undefined && this.postings.has(joined)) add(joined, EXPANSION_WEIGHTS.joined);
        }
        if (t.length >= MIN_PREFIX) for (const longer of this.longerTerms(t)) add(longer, EXPANSION_WEIGHTS.prefix);
        for (const synonym of synonymsOf(t)) add(synonym, EXPANSION_WEIGHTS.synonym);
        if (!this.postings.has(t) && t.length >= MIN_TYPO) for (const near of this.oneTypoFrom(t)) add(near, EXPANSION_WEIGHTS.typo);
      }
      out.push(expansions);
    });
    return out;
  }

  /** Indexed terms that begin with `prefix` and are longer, the most frequent first. */
  private longerTerms(prefix: string): string[] {
    const { vocabulary } = this;
    let low = 0;
    let high = vocabulary.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (vocabulary[mid] < prefix) low = mid + 1;
      else high = mid;
    }
    const found: string[] = [];
    for (let i = low; i < vocabulary.length && vocabulary[i].startsWith(prefix); i++) if (vocabulary[i] !== prefix) found.push(vocabulary[i]);
    if (found.length <= MAX_PREFIX_TERMS) return found;
    return found.sort((a, b) => (this.postings.get(b)?.docs.length ?? 0) - (this.postings.get(a)?.docs.length ?? 0)).slice(0, MAX_PREFIX_TERMS);
  }

  /** Indexed terms one edit (a letter changed, added, dropped, or two swapped) from `word`. */
  private oneTypoFrom(word: string): string[] {
    const found: string[] = [];
    for (let length = word.length - 1; length <= word.length + 1; length++) {
      for (const candidate of this.byLength.get(length) ?? []) if (oneEditApart(word, candidate)) found.push(candidate);
    }
    return found;
  }
}

function oneEditApart(a: string, b: string): boolean {
  if (a.length === b.length) {
    let first = -1;
    let differences = 0;
    for (let i = 0; i < a.length; i++) {
      if (a[i] === b[i]) continue;
      if (++differences === 1) first = i;
      else if (differences > 2) return false;
    }
    if (differences === 1) return true;
    // Two letters swapped.
    return differences === 2 && a[first] === b[first + 1] && a[first + 1] === b[first];
  }
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  let i = 0;
  while (i < short.length && short[i] === long[i]) i++;
  return short.slice(i) === long.slice(i + 1);
}

/** A document's fields as terms. */
function analyse(document: SearchDocument): Record<Field, string[]> {
  const { fields } = document;
  const name = terms(fields.name);
  const joined = joinedIdentifier(fields.name);
  if (joined !== undefined) {
    const t = term(joined);
    if (t !== undefined) name.push(t);
  }
  return {
    name,
    description: terms(fields.description),
    category: terms(fields.category),
    properties: terms(fields.properties),
    details: terms(fields.details),
    examples: terms(fields.examples),
  };
}
