/**
 * What search mode costs (ADR: tool search), on catalogs of 500 and 5,000 tools made from the
 * public tools of bench/search/tools.tsv (each copied into packs, its description and schema
 * varied), served in this process by twylt-mcp's createServer through the SDK's in-memory
 * transport, browse mode as the baseline in the same run:
 *
 * - the listing a client takes before the model's first word (tools/list and the server
 *   instructions), in bytes, per mode (one MCP tool per tool, browse, search);
 * - the index ready: CatalogSearch.prepare, the time from the tool set to the first query, the
 *   index built, and read from the file `twylt scan --write` stores beside a catalog (its size);
 * - a twylt_search answered: p50 and p95 over requests from bench/search/queries.tsv,
 *   measured by the client (the bridge's handler, the MCP framing and the in-memory hop);
 * - memory: the heap and external memory after a browse server and after a search server
 *   (with its index), gc'd.
 *
 *   npm run build && node --expose-gc bench/search-perf.mjs [--json] [--quick]
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CatalogSearch, createServer } from '../packages/twylt-mcp/dist/index.js';
import { storedIndexFile, writeStoredIndex } from '../packages/twylt/dist/toolset/search/index.js';
import { benchFlags } from './lib/flags.mjs';
import { ROOT } from './prepare.mjs';

const flags = benchFlags('Usage: node --expose-gc bench/search-perf.mjs [--json] [--quick]', {});
const QUERIES_PER_SIZE = flags.quick ? 200 : 1000;
if (typeof globalThis.gc !== 'function') {
  process.stderr.write('run with node --expose-gc (the memory figures need a collection)\n');
  process.exit(64);
}

const rows = (file) =>
  readFileSync(join(ROOT, 'bench/search', file), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => line.split('\t'));
const base = rows('tools.tsv').map(([name, category, description]) => ({ name, category, description }));
const queries = rows('queries.tsv').map(([, text]) => text);
const QUALIFIERS = ['staging', 'production', 'archive', 'europe', 'asia', 'team', 'personal', 'legacy', 'beta', 'internal', 'partner', 'billing', 'analytics', 'support', 'sales'];

/** `size` bridge tools: copies of the public tools in packs, each with a varied description and a schema of 3 to 6 properties. */
function catalog(size) {
  return Array.from({ length: size }, (_, i) => {
    const tool = base[i % base.length];
    const pack = Math.floor(i / base.length);
    const qualifier = QUALIFIERS[pack % QUALIFIERS.length];
    const properties = {};
    for (let p = 0; p < 3 + (i % 4); p++) properties[`${['target', 'name', 'filter', 'limit', 'format', 'mode'][p]}`] = { type: 'string', description: `The ${['target', 'name', 'filter', 'limit', 'format', 'mode'][p]} of the ${tool.category.split('/')[0]} request` };
    properties.mode = { type: 'string', enum: ['fast', 'full', 'dry-run'] };
    const name = pack === 0 ? tool.name : `${tool.name}_${qualifier}_${pack}`;
    return {
      definition: { name, description: `${tool.description} (${qualifier} workspace ${pack})`, inputSchema: { type: 'object', properties, additionalProperties: false } },
      runner: { entry: { command: ['unused'], category: `pack${pack}/${tool.category}` } },
      examples: [],
    };
  });
}

async function connect(tools, options) {
  const server = createServer(tools, options);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'bench', version: '0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return { client, server };
}

async function listingBytes(client) {
  const { tools } = await client.listTools();
  return Buffer.byteLength(JSON.stringify({ tools })) + Buffer.byteLength(client.getInstructions() ?? '');
}

/** The JavaScript heap and the memory outside it (the index's typed arrays), after a collection. */
function heapMiB() {
  globalThis.gc();
  globalThis.gc();
  const { heapUsed, external } = process.memoryUsage();
  return (heapUsed + external) / 2 ** 20;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const results = [];
for (const size of [500, 5000]) {
  const tools = catalog(size);
  const direct = await connect(tools, { catalog: 'tools' });
  const toolsBytes = await listingBytes(direct.client);
  await direct.client.close();

  const before = heapMiB();
  const browse = await connect(tools, { catalog: 'browse' });
  const browseBytes = await listingBytes(browse.client);
  const browseHeap = heapMiB() - before;

  const search = new CatalogSearch(undefined, () => {});
  const started = performance.now();
  await search.prepare(tools);
  const indexMs = performance.now() - started;
  const searching = await connect(tools, { catalog: 'search', search });
  const searchBytes = await listingBytes(searching.client);
  const searchHeap = heapMiB() - before - browseHeap;

  // The same index read from the file `twylt scan --write` stores beside catalog.json.
  const folder = mkdtempSync(join(tmpdir(), 'twylt-search-perf-'));
  const catalogFile = join(folder, 'catalog.json');
  const searchable = tools.map(({ definition, runner, examples }) => ({ ...definition, category: runner.entry.category, examples }));
  await writeStoredIndex(storedIndexFile(catalogFile), searchable);
  const storedBytes = statSync(storedIndexFile(catalogFile)).size;
  const lines = [];
  const fromFile = new CatalogSearch(undefined, (line) => lines.push(line), [catalogFile]);
  const reading = performance.now();
  await fromFile.prepare(tools);
  const readMs = performance.now() - reading;
  if (!lines.some((line) => line.includes('read from'))) throw new Error(`the stored index was not used: ${lines.join('; ')}`);
  rmSync(folder, { recursive: true, force: true });

  // Warm-up, then timed requests, one at a time, as a model sends them.
  for (let i = 0; i < 200; i++) await searching.client.callTool({ name: 'twylt_search', arguments: { query: queries[i % queries.length] } });
  const times = [];
  for (let i = 0; i < QUERIES_PER_SIZE; i++) {
    const at = performance.now();
    await searching.client.callTool({ name: 'twylt_search', arguments: { query: queries[i % queries.length] } });
    times.push(performance.now() - at);
  }
  const browseTimes = [];
  for (let i = 0; i < 50; i++) {
    const at = performance.now();
    await browse.client.callTool({ name: 'twylt_list', arguments: {} });
    browseTimes.push(performance.now() - at);
  }
  times.sort((a, b) => a - b);
  browseTimes.sort((a, b) => a - b);
  results.push({
    tools: size,
    listingBytes: { tools: toolsBytes, browse: browseBytes, search: searchBytes },
    indexMs: Math.round(indexMs),
    storedIndex: { readMs: Math.round(readMs), bytes: storedBytes },
    searchMs: { p50: percentile(times, 50), p95: percentile(times, 95) },
    browseListAllMs: { p50: percentile(browseTimes, 50) },
    heapMiB: { browse: browseHeap, searchIndexAdded: searchHeap },
  });
  await Promise.all([browse.client.close(), searching.client.close()]);
}

if (flags.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
else {
  console.log('| Tools | tools/list + instructions: tools / browse / search | search vs tools | Index ready: built / read from scan --write\'s file (its size) | twylt_search p50 / p95 | twylt_list (all) p50 | Heap added by search mode |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of results) {
    const { tools, browse, search } = r.listingBytes;
    console.log(
      `| ${r.tools} | ${kib(tools)} / ${kib(browse)} / ${kib(search)} | ${(100 * (1 - search / tools)).toFixed(1)}% fewer bytes | ${r.indexMs} ms / ${r.storedIndex.readMs} ms (${kib(r.storedIndex.bytes)}) | ${r.searchMs.p50.toFixed(2)} / ${r.searchMs.p95.toFixed(2)} ms | ${r.browseListAllMs.p50.toFixed(1)} ms | ${r.heapMiB.searchIndexAdded.toFixed(1)} MiB (browse server: ${r.heapMiB.browse.toFixed(1)} MiB) |`,
    );
  }
}

function kib(bytes) {
  return bytes < 10 * 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(0)} KiB`;
}
