/**
 * The subcommands. A new one is a file in commands/ exporting `command`, plus one line here;
 * nothing is imported until it runs.
 */
import type { Command } from './command.js';

export interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

export const COMMANDS: readonly CommandEntry[] = [
  { name: 'describe', summary: 'print what a tool publishes: a readable summary, or the raw JSON', load: async () => (await import('./commands/describe.js')).command },
  { name: 'call', summary: 'run a tool on one input and print its output', load: async () => (await import('./commands/call.js')).command },
  { name: 'build', summary: 'bundle a tool into one file for plain node, or into one executable', load: async () => (await import('./commands/build.js')).command },
  { name: 'check', summary: 'check that an executable honours TWYLT 1.8 (table, --json, --junit)', load: async () => (await import('./commands/check.js')).command },
  { name: 'scan', summary: 'find the tools in folders (runs their code), install what they need, write a catalog', load: async () => (await import('./commands/scan.js')).command },
  { name: 'search', summary: 'find the tools of a catalog by what they do, ranked as twylt-mcp --catalog search ranks them', load: async () => (await import('./commands/search.js')).command },
  { name: 'inspect', summary: 'a local web page to try tools: forms from their schemas, calls, history', load: async () => (await import('./commands/inspect.js')).command },
];
