/**
 * The runtime's own modules (packages/twylt/src/tool) import each other without a cycle,
 * type-only imports included: hooks, stdin and transport stand in a line (ADR 0026).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../support/process.js';

const DIR = join(ROOT, 'packages/twylt/src/tool');

/** Each module's relative imports within the directory, by module name. */
function graph(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const file of readdirSync(DIR).filter((name) => name.endsWith('.ts'))) {
    const text = readFileSync(join(DIR, file), 'utf8');
    const imports = [...text.matchAll(/from '\.\/([\w-]+)\.js'/g)].map((match) => match[1]!);
    edges.set(file.replace(/\.ts$/, ''), [...new Set(imports)]);
  }
  return edges;
}

/** A cycle as the path that closes it, or undefined. */
function findCycle(edges: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string, path: string[]): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
    state.set(node, 'open');
    for (const next of edges.get(node) ?? []) {
      const cycle = visit(next, [...path, node]);
      if (cycle) return cycle;
    }
    state.set(node, 'done');
    return undefined;
  };
  for (const node of edges.keys()) {
    const cycle = visit(node, []);
    if (cycle) return cycle;
  }
  return undefined;
}

it('the tool runtime modules import each other without a cycle', () => {
  const edges = graph();
  expect(edges.get('transport')).toContain('stdin');
  expect(findCycle(edges)).toBeUndefined();
});

it('the check finds a cycle when there is one', () => {
  expect(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]]))).toEqual(['a', 'b', 'c', 'a']);
});
