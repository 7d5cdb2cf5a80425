/** `twylt search`: the built command on a catalog of real tools; the ranking of twylt-mcp's search mode. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { searchCatalog } from '../support/search-catalog.js';
import { runTwylt } from '../support/twylt-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'twylt-search-cli-'));
const config = join(dir, 'catalog.json');
writeFileSync(config, JSON.stringify(searchCatalog()));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('twylt search', () => {
  it('prints the best tools, best first: score, name, category, description', async () => {
    const result = await runTwylt(['search', 'open a pull request', '--config', config, '--limit', '3']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\s*\d+\.\d{3}  create_pull_request  github\/pulls  Create a new pull request in a GitHub repository$/);
  });

  it('--json prints what twylt_search returns', async () => {
    const result = await runTwylt(['search', 'weather tomorrow', '--config', config, '--json', '--limit', '1']);
    expect(result.code).toBe(0);
    const { tools } = JSON.parse(result.stdout);
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({ name: 'get_forecast', category: 'weather', inputSchema: { type: 'object', properties: { latitude: { type: 'string' } } } });
    expect(typeof tools[0].score).toBe('number');
  });

  it('says when nothing matches, and refuses wrong usage with exit 64', async () => {
    const none = await runTwylt(['search', 'zzzqqq', '--config', config]);
    expect(none).toMatchObject({ code: 0, stdout: 'no tool matches "zzzqqq"\n' });
    const noQuery = await runTwylt(['search', '--config', config]);
    expect(noQuery.code).toBe(64);
    expect(noQuery.stderr).toMatch(/give one QUERY/);
    const limit = await runTwylt(['search', 'x', '--config', config, '--limit', '50']);
    expect(limit.code).toBe(64);
    expect(limit.stderr).toMatch(/--limit/);
    const model = await runTwylt(['search', 'x', '--config', config, '--search-model', 'm']);
    expect(model.code).toBe(64);
    expect(model.stderr).toMatch(/--search-model needs --search-embeddings URL/);
  });
});
