/**
 * How the tools are offered: one MCP tool per TWYLT tool, or browse mode's two (catalog.ts),
 * or search mode's two (search.ts). A module of its own, with no imports: the argument
 * parser, the servers and the public types all name it (ADR 0041).
 */
export type CatalogMode = 'tools' | 'browse' | 'search';
export const CATALOG_MODES: readonly CatalogMode[] = ['tools', 'browse', 'search'];
