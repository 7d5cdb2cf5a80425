/**
 * The lexical ranking's coordination factor, on the public tools of bench/search/tools.tsv: a
 * tool's score is scaled by how much of the request it matches, so a tool that shares one
 * word of its name with the request ("make" in twilio_make_call) no longer beats the tool that
 * matches most of what was asked.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ToolSearch } from 'twylt/search';
import { ROOT } from '../support/process.js';

const tools = readFileSync(join(ROOT, 'bench/search/tools.tsv'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.startsWith('#'))
  .map((line) => line.split('\t'))
  .map(([name, category, description]) => ({ name: name!, category, description }));
const search = new ToolSearch(tools);
const first = (query: string) => search.searchLexical(query, { limit: 5 }).hits[0]?.tool.name;

describe('the lexical ranking', () => {
  it('puts the tool that matches most of the request before one that matches a word of its name', () => {
    expect(first('make a new repo called dotfiles on my github')).toBe('create_repository');
    expect(first('change the README in my repo on github to add an install section')).toBe('create_or_update_file');
    expect(first('show the logs of the payments pod')).toBe('kubectl_logs');
  });

  it('counts a word matched through a synonym for less than one matched as written', () => {
    // "locate" is a synonym of "address" and "map"; get_forecast's "location" would otherwise match all three words.
    const weather = new ToolSearch([
      { name: 'maps_geocode', description: 'Convert an address into geographic coordinates' },
      { name: 'get_forecast', description: 'Get the weather forecast for a location given its latitude' },
    ]);
    expect(weather.searchLexical('where is this address on the map, latitude', { limit: 2 }).hits.map((hit) => hit.tool.name)).toEqual(['maps_geocode', 'get_forecast']);
  });
});
