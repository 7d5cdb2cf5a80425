/**
 * twylt-ai's search: searchTools() over described tools, and the twylt_search + twylt_call
 * pair of AI SDK tools, on real tool processes; the same ranking as twylt-mcp's search mode.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeForAgents, searchTools, twyltSearchTools, type TwyltSearchPair } from 'twylt-ai';
import { searchCatalog } from '../support/search-catalog.js';

const entries = searchCatalog().tools;
let pair: TwyltSearchPair;

beforeAll(async () => {
  pair = await twyltSearchTools(entries);
}, 60_000);
afterAll(() => {
  for (const tool of pair?.tools ?? []) tool.runner.close();
});

const options = { toolCallId: 'call-1', messages: [] };

describe('searchTools', () => {
  it('ranks described tools by what they do, with their schemas, limit and category honoured', async () => {
    const tools = await describeForAgents(entries);
    const found = await searchTools(tools, 'post a message in the team chat');
    expect(found[0]).toMatchObject({ name: 'slack_post_message', category: 'slack', description: 'Post a new message to a Slack channel' });
    expect(found[0]!.inputSchema).toMatchObject({ properties: { channel_id: { type: 'string' } } });
    expect(await searchTools(tools, 'file', { limit: 2 })).toHaveLength(2);
    const github = await searchTools(tools, 'file', { category: 'github', limit: 20 });
    expect(github.every((tool) => tool.category.startsWith('github/'))).toBe(true);
  });
});

describe('the twylt_search + twylt_call pair', () => {
  it('finds a tool, then runs it by name; a wrong name or wrong arguments is an error the model reads', async () => {
    const search = await pair.twylt_search.execute({ query: 'where is this address on the map, latitude' }, options);
    expect(search.tools[0]!.name).toBe('maps_geocode');
    const output = await pair.twylt_call.execute({ name: 'maps_geocode', arguments: { address: '10 Downing Street' } }, options);
    expect(output).toEqual({ tool: 'maps_geocode', input: { address: '10 Downing Street' } });
    await expect(pair.twylt_call.execute({ name: 'nope', arguments: {} }, options) ).rejects.toThrow(
      'There is no tool named "nope". Call twylt_search to find the tools and their names.',
    );
    await expect(pair.twylt_call.execute({ name: 'maps_geocode', arguments: { address: 7 } }, options) ).rejects.toThrow(
      /^the arguments break the inputSchema of "maps_geocode":\n- \/address: must be a string/,
    );
  });
});
