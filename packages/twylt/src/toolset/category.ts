/**
 * Categories group the tools of a large catalog: a config entry's `category`, "pack/subfolder",
 * slash-separated. Shared by the consumers that show a catalog by category (twylt-mcp's
 * browse mode, the inspect page).
 */
import type { ToolEntry } from './entry.js';

/** The group of the tools whose entry names no category. */
export const DEFAULT_CATEGORY = 'uncategorized';

export function categoryOf(entry: Pick<ToolEntry, 'category'>): string {
  return entry.category ?? DEFAULT_CATEGORY;
}

/** Whether `category` is `filter` or lies below it (`git` holds `git/history`, not `github`). */
export function inCategory(category: string, filter: string): boolean {
  return category === filter || category.startsWith(`${filter.replace(/\/+$/, '')}/`);
}

/** Each category with the number of its tools, sorted by name. */
export function categoryCounts(categories: Iterable<string>): Array<{ name: string; tools: number }> {
  const counts = new Map<string, number>();
  for (const category of categories) counts.set(category, (counts.get(category) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, tools]) => ({ name, tools }));
}
