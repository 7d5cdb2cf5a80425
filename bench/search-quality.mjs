/**
 * How well each ranking finds the right tool (ADR: tool search): the tools of well-known MCP
 * servers (bench/search/tools.tsv) and natural-language requests each labelled with the tool
 * that serves it (bench/search/queries.tsv, which the ranking was tuned on, and
 * queries-heldout.tsv, written after it was frozen; queries-heldout2.tsv, phrased as users ask and
 * frozen before the ranking's second tuning). Hit@1, Hit@5 and nDCG@5 (one relevant tool:
 * 1/log2(1 + rank) when it is in the first five) for each ranking:
 *
 * - plain BM25 over name and description (lower case, split at non-letters; k1 1.2, b 0.75):
 *   the baseline the issue names;
 * - twylt/search's BM25F without request expansion, then with it (the default);
 * - the same fields and analyzer through MiniSearch (a well-kept library), when
 *   MINISEARCH_DIR names a folder where `npm install minisearch` put it.
 *
 *   npm run build && node bench/search-quality.mjs [--json]
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ToolSearch, terms } from '../packages/twylt/dist/toolset/search/index.js';
import { benchFlags } from './lib/flags.mjs';
import { ROOT } from './prepare.mjs';

const flags = benchFlags('Usage: node bench/search-quality.mjs [--json]', {});

function rows(file) {
  return readFileSync(join(ROOT, 'bench/search', file), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => line.split('\t'));
}
const tools = rows('tools.tsv').map(([name, category, description]) => ({ name, category, description }));
const development = rows('queries.tsv').map(([tool, text]) => ({ tool, text }));
const heldOut = rows('queries-heldout.tsv').map(([tool, text]) => ({ tool, text }));
const heldOut2 = rows('queries-heldout2.tsv').map(([tool, text]) => ({ tool, text }));
const names = new Set(tools.map((tool) => tool.name));
for (const { tool } of [...development, ...heldOut, ...heldOut2]) if (!names.has(tool)) throw new Error(`a request names ${tool}, which tools.tsv lacks`);

/** Textbook BM25: lower case, split at anything but letters and digits, nothing else. */
function plainBm25(docs) {
  const tokenize = (text) => text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  const k1 = 1.2;
  const b = 0.75;
  const docTerms = docs.map((doc) => tokenize(`${doc.name} ${doc.description}`));
  const avg = docTerms.reduce((sum, t) => sum + t.length, 0) / docTerms.length;
  const df = new Map();
  for (const t of docTerms) for (const term of new Set(t)) df.set(term, (df.get(term) ?? 0) + 1);
  const n = docs.length;
  return (query) => {
    const q = [...new Set(tokenize(query))];
    return docTerms
      .map((t, index) => {
        let score = 0;
        for (const term of q) {
          const tf = t.filter((x) => x === term).length;
          if (tf === 0) continue;
          const idf = Math.log(1 + (n - df.get(term) + 0.5) / (df.get(term) + 0.5));
          score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * t.length) / avg));
        }
        return { index, score };
      })
      .filter((hit) => hit.score > 0)
      .sort((x, y) => y.score - x.score)
      .slice(0, 5)
      .map(({ index }) => docs[index].name);
  };
}

function ours(docs, options) {
  const search = new ToolSearch(docs, { lexical: options });
  return (query) => search.searchLexical(query, { limit: 5 }).hits.map(({ tool }) => tool.name);
}

/** MiniSearch with our analyzer (identifier splitting, stop words, stemming), its prefix and fuzzy search, fields boosted as ours. */
function miniSearch(docs, MiniSearch) {
  const index = new MiniSearch({
    fields: ['name', 'description', 'category'],
    storeFields: ['name'],
    idField: 'name',
    tokenize: (text) => [text],
    processTerm: (text) => terms(text),
    searchOptions: { boost: { name: 3, description: 1.5, category: 1.2 }, prefix: true, fuzzy: 0.2, combineWith: 'OR' },
  });
  index.addAll(docs);
  return (query) => index.search(query).slice(0, 5).map((hit) => hit.id);
}

function score(rank, queries) {
  const metrics = { hit1: 0, hit5: 0, ndcg5: 0 };
  const misses = [];
  for (const { tool, text } of queries) {
    const found = rank(text);
    const at = found.indexOf(tool);
    if (at === 0) metrics.hit1++;
    if (at >= 0 && at < 5) {
      metrics.hit5++;
      metrics.ndcg5 += 1 / Math.log2(at + 2);
    } else misses.push({ text, tool, got: found.slice(0, 3) });
  }
  const n = queries.length;
  return { hit1: metrics.hit1 / n, hit5: metrics.hit5 / n, ndcg5: metrics.ndcg5 / n, misses };
}

const noCategory = tools.map(({ name, description }) => ({ name, description }));
const rankings = [
  ['plain BM25, name + description (baseline)', plainBm25(tools)],
  ['twylt BM25F, no expansion', ours(tools, { expand: false })],
  ['twylt BM25F + expansion (default)', ours(tools, {})],
  ['twylt default, name + description only', ours(noCategory, {})],
];
if (process.env.MINISEARCH_DIR) {
  const MiniSearch = createRequire(join(process.env.MINISEARCH_DIR, 'package.json'))('minisearch');
  rankings.push(['MiniSearch 7 (same analyzer, prefix + fuzzy)', miniSearch(tools, MiniSearch.default ?? MiniSearch)]);
}

const sets = [
  ['development (the ranking was tuned on it)', development],
  ['held out (written after tuning)', heldOut],
  ['held out 2 (users\' phrasing, frozen before the second tuning)', heldOut2],
];
const results = sets.map(([set, queries]) => ({ set, queries: queries.length, rankings: rankings.map(([name, rank]) => ({ name, ...score(rank, queries) })) }));
if (flags.json) {
  process.stdout.write(`${JSON.stringify({ tools: tools.length, results: results.map(({ rankings: r, ...rest }) => ({ ...rest, rankings: r.map(({ misses, ...metrics }) => metrics) })) }, null, 2)}\n`);
} else {
  console.log(`${tools.length} tools\n`);
  console.log('| Requests | Ranking | Hit@1 | Hit@5 | nDCG@5 |\n|---|---|---|---|---|');
  for (const { set, queries, rankings: ranked } of results) {
    for (const { name, hit1, hit5, ndcg5 } of ranked) console.log(`| ${set}, ${queries} | ${name} | ${hit1.toFixed(2)} | ${hit5.toFixed(2)} | ${ndcg5.toFixed(2)} |`);
  }
  if (process.env.SHOW_MISSES) for (const miss of results[0].rankings[2].misses) console.log(`miss: ${miss.text} -> want ${miss.tool}, got ${miss.got.join(', ')}`);
}
