/** `twylt search`: the tools of a catalog that best fit a request, ranked as twylt-mcp's search mode ranks them. */
import { resolve } from 'node:path';
import { formatJson } from '../../protocol/render.js';
import { categoryOf } from '../../toolset/category.js';
import { ConfigError, collectEntries } from '../../toolset/config.js';
import { ToolsetError, describeToolset } from '../../toolset/describe.js';
import { splitArgv } from '../../toolset/args.js';
import { formatOptions, parseCount, type OptionSpec } from '../../toolset/option-spec.js';
import { TOOLSET_OPTIONS, toolsetOptions } from '../../toolset/options.js';
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SEARCH_OPTIONS, embeddingsFromFlags } from '../../toolset/search/options.js';
import { CLI_EXIT, HELP_OPTION, UsageError, parseOptions, type Command } from '../command.js';
import { interruptible } from '../interrupt.js';

const OWN_OPTIONS = {
  config: TOOLSET_OPTIONS.config,
  limit: { type: 'string', value: 'N', help: `show at most N tools (1 to ${MAX_SEARCH_LIMIT}, default ${DEFAULT_SEARCH_LIMIT})` },
  category: { type: 'string', value: 'C', help: 'only tools in category C or below it' },
  json: { type: 'boolean', help: 'print {"tools": [{"name", "category", "description", "inputSchema", "score"}]}, as twylt_search answers' },
  'describe-timeout': TOOLSET_OPTIONS['describe-timeout'],
  help: HELP_OPTION,
} as const satisfies Record<string, OptionSpec>;

const LAYOUT = { column: 24, width: 92 };

const HELP = `twylt search: find the tools of a catalog by what they do

Usage:
  twylt search QUERY --config catalog.json [--limit N] [--category C] [--json]
  twylt search QUERY [options] -- <tool command...> [-- <tool command...>]...

Ranks the tools as "twylt-mcp --catalog search" does: by their names (split at snake_case,
camelCase and kebab-case), descriptions, categories, the names, descriptions and enum
values of their properties, and their few-shot inputs; offline, with nothing downloaded.
A catalog written by "twylt scan --write" is searched without starting its tools; other
tools are described first.

Options:
${formatOptions(OWN_OPTIONS, LAYOUT)}${formatOptions(SEARCH_OPTIONS, LAYOUT)}
Example:
  twylt search "open a pull request" --config catalog.json
  twylt search "weather tomorrow" --config catalog.json --limit 3 --json
`;

export const command: Command = {
  name: 'search',
  help: HELP,
  async run(args, io) {
    const split = splitArgv(args);
    const { values, positionals } = parseOptions({ args: split.options, strict: true, allowPositionals: true, options: { ...OWN_OPTIONS, ...SEARCH_OPTIONS } });
    if (values.help) {
      io.stdout.write(HELP);
      return CLI_EXIT.ok;
    }
    if (positionals.length !== 1 || positionals[0].trim() === '') throw new UsageError('give one QUERY (quote it: twylt search "open a pull request" --config catalog.json)');
    const query = positionals[0];
    const configs = values.config ?? [];
    if (configs.length === 0 && split.commands.length === 0) throw new UsageError('no tools given: use --config FILE, or put "-- <tool command...>" after the options');
    const limit = values.limit === undefined ? undefined : parseCount('--limit', values.limit, 1, MAX_SEARCH_LIMIT);
    const embeddings = embeddingsFromFlags(values, io.env);
    const say = (line: string) => io.stderr.write(`twylt search: ${line}\n`);

    let described;
    try {
      const entries = (await collectEntries(configs.map((file) => resolve(io.cwd, file)), split.commands)).map((entry) => ({ ...entry, cwd: entry.cwd ?? io.cwd }));
      described = await interruptible((signal) => describeToolset(entries, { defaults: toolsetOptions(values), signal, onUndescribed: (problem) => say(`left out: ${problem}`) }));
    } catch (error) {
      if (error instanceof ConfigError) {
        say(error.message);
        return CLI_EXIT.failed;
      }
      if (error instanceof ToolsetError) {
        say(`cannot search:\n${error.problems.map((problem) => `  ${problem}`).join('\n')}`);
        return CLI_EXIT.failed;
      }
      throw error;
    }
    for (const tool of described) tool.runner.close();

    // Loaded only now: no other command needs it.
    const { Embedder, ToolSearch, findStoredIndex, searchableTool, storedIndexFile, toolCards } = await import('../../toolset/search/index.js');
    const tools = described.map(({ name, spec, runner }) => searchableTool(name, spec, categoryOf(runner.entry)));
    // The index `twylt scan --write` stored beside a catalog, when it is of these very tools.
    const index = await findStoredIndex(configs.map((file) => storedIndexFile(resolve(io.cwd, file))), tools, say);
    const search = new ToolSearch(tools, { embedder: embeddings && new Embedder(embeddings), log: say, index });
    await search.ready();
    const result = await search.search(query, { limit, category: values.category });
    const cards = toolCards(result.hits);
    if (values.json) {
      io.stdout.write(`${formatJson({ tools: cards })}\n`);
      return CLI_EXIT.ok;
    }
    if (cards.length === 0) {
      io.stdout.write(`no tool matches ${JSON.stringify(query)}\n`);
      return CLI_EXIT.ok;
    }
    const width = Math.max(...cards.map((card) => card.name.length));
    for (const card of cards) {
      const description = card.description.split('\n')[0];
      io.stdout.write(`${card.score.toFixed(3).padStart(7)}  ${card.name.padEnd(width)}  ${card.category}  ${description}\n`);
    }
    return CLI_EXIT.ok;
  },
};
