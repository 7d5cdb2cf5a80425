/**
 * The search index `twylt scan --write` stores beside the catalog: a bridge in search mode
 * reads it instead of building it (its log says so), builds it again when the catalog's tools
 * or descriptions changed since, and when the file is corrupt (a warning, never a crash);
 * read back, it ranks exactly as the index built from the tools does.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LexicalIndex, ToolSearch, readStoredIndex, searchDocument, storedIndexFile, writeStoredIndex } from 'twylt/search';
import { ROOT } from '../support/process.js';
import { runTwylt } from '../support/twylt-cli.js';
import { startBridge } from '../support/mcp.js';
import { startHttpBridge } from '../support/mcp-http.js';
import { copyPack, scan, scratch } from './support.js';

const dir = scratch('search-index');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Found = { tools: Array<{ name: string; description: string }> };

/** The bridge in search mode over `catalog`: what it logged at start, and the tools a query finds. */
async function searchWith(catalog: string, query: string): Promise<{ log: string; found: Found['tools'] }> {
  const bridge = await startBridge(['--catalog', 'search', '--config', catalog]);
  try {
    const result = await bridge.client.callTool({ name: 'twylt_search', arguments: { query } });
    return { log: bridge.stderr(), found: (result.structuredContent as Found).tools };
  } finally {
    await bridge.close();
  }
}

describe('twylt scan --write and a bridge in search mode', () => {
  const pack = copyPack('counted', dir);
  const catalog = join(dir, 'catalog.json');
  const index = join(dir, 'catalog.search-index.json');

  it('stores the index beside the catalog, and the bridge reads it instead of building it', async () => {
    const scanned = await scan([pack, '--write', catalog]);
    expect(scanned.code, scanned.stderr).toBe(0);
    expect(storedIndexFile(catalog)).toBe(index);
    expect(existsSync(index)).toBe(true);
    const { log, found } = await searchWith(catalog, 'add two integers');
    expect(log).toContain(`search: index of 1 tools read from ${index}`);
    expect(found.map((tool) => tool.name)).toEqual(['counted']);
  }, 60_000);

  it('is read by the bridge over HTTP too', async () => {
    const bridge = await startHttpBridge(['--catalog', 'search', '--config', catalog]);
    try {
      const client = await bridge.connect();
      const result = await client.callTool({ name: 'twylt_search', arguments: { query: 'add two integers' } });
      expect((result.structuredContent as Found).tools.map((tool) => tool.name)).toEqual(['counted']);
      expect(bridge.stderr()).toContain(`search: index of 1 tools read from ${index}`);
    } finally {
      await bridge.stop();
    }
  }, 60_000);

  it('is read by twylt search --config too', async () => {
    const run = await runTwylt(['search', 'add two integers', '--config', catalog]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`twylt search: search: index of 1 tools read from ${index}`);
    expect(run.stdout).toMatch(/ counted /);
  }, 60_000);

  it('builds the index again when the tools described differ from the stored index', async () => {
    const text = readFileSync(catalog, 'utf8');
    const edited = JSON.parse(text);
    edited.tools[0].describeCache.spec.description = 'Sum a pair of whole numbers.';
    writeFileSync(catalog, JSON.stringify(edited));
    try {
      const { log, found } = await searchWith(catalog, 'sum whole numbers');
      expect(log).toContain(`search: ${index} is out of date`);
      expect(log).not.toContain('read from');
      expect(found.map((tool) => tool.description)).toEqual(['Sum a pair of whole numbers.']);
    } finally {
      writeFileSync(catalog, text);
    }
  }, 60_000);

  it('ignores a corrupt index with a warning and builds its own', async () => {
    const stored = readFileSync(index, 'utf8');
    writeFileSync(index, stored.slice(0, stored.length / 2));
    try {
      const { log, found } = await searchWith(catalog, 'add two integers');
      expect(log).toMatch(new RegExp(`warning: search: ${index.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be used \\(.*JSON.*\\); the index is built instead`));
      expect(found.map((tool) => tool.name)).toEqual(['counted']);
    } finally {
      writeFileSync(index, stored);
    }
  }, 60_000);
});

describe('a stored index read back', () => {
  const tools = readFileSync(join(ROOT, 'bench/search/tools.tsv'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => line.split('\t'))
    .map(([name, category, description]) => ({ name: name!, category, description }));
  const queries = readFileSync(join(ROOT, 'bench/search/queries.tsv'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => line.split('\t')[1]!);
  const file = join(dir, 'bench.search-index.json');
  const documents = tools.map(searchDocument);

  it('ranks every request exactly as the index built from the tools', async () => {
    await writeStoredIndex(file, tools);
    const read = await readStoredIndex(file, documents);
    expect(read.index).toBeInstanceOf(LexicalIndex);
    const built = new ToolSearch(tools);
    const stored = new ToolSearch(tools, { index: read.index });
    for (const query of queries) expect(stored.searchLexical(query, { limit: 10 }).hits, query).toEqual(built.searchLexical(query, { limit: 10 }).hits);
  });

  it('is not used for other tools, or when its posting lists are cut short or point past the catalog', async () => {
    await writeStoredIndex(file, tools);
    const fewer = await readStoredIndex(file, documents.slice(1));
    expect(fewer).toMatchObject({ index: undefined, reason: 'stale' });
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...stored, docs: stored.docs.slice(0, 40) }));
    expect(await readStoredIndex(file, documents)).toMatchObject({ index: undefined, reason: 'corrupt', detail: 'its posting lists are cut short' });
    const beyond = Buffer.from(stored.docs, 'base64');
    beyond.writeUInt32LE(tools.length + 7, 0);
    writeFileSync(file, JSON.stringify({ ...stored, docs: beyond.toString('base64') }));
    expect(await readStoredIndex(file, documents)).toMatchObject({ index: undefined, reason: 'corrupt', detail: 'a posting names a tool beyond the catalog' });
    expect(await readStoredIndex(join(dir, 'none.json'), documents)).toMatchObject({ index: undefined, reason: 'missing' });
  });
});
