/**
 * The tool list (grouped by category when there are several, with a filter box, so that a
 * catalog of a hundred tools stays usable), and the selected tool's identity, requirements
 * and describe modes.
 */
import { useEffect, useState } from 'preact/hooks';
import { DESCRIBE_MODES, type DescribeMode } from '../../protocol/constants.js';
import type { ToolInfo } from '../types.js';
import { JsonText } from './JsonText.js';
import { searchTools } from './api.js';

/** Wait this long after the last key before asking the server: one search per pause, not per key. */
const SEARCH_DELAY_MS = 150;

/** From this many tools on, each takes less room: a line of description, no format line. */
const COMPACT_FROM = 12;

export function ToolList({ tools, leftOut, selected, onSelect, onReload, reloading }: { tools: readonly ToolInfo[]; leftOut: readonly string[]; selected?: string; onSelect(name: string): void; onReload(): void; reloading: boolean }) {
  const [filter, setFilter] = useState('');
  const shown = tools.filter((tool) => matches(tool, filter));
  const groups = groupByCategory(shown);
  // A catalog in one group (or none given) keeps the plain list.
  const headed = new Set(tools.map((tool) => tool.category)).size > 1;
  return (
    <nav class={tools.length > COMPACT_FROM ? 'tools compact' : 'tools'} aria-label="Tools">
      <div class="tools-inner">
        <div class="panel-head">
          <h2>Tools</h2>
          <button type="button" class="small" onClick={onReload} disabled={reloading} title="Describe every tool again">
            {reloading ? 'Reloading…' : 'Reload'}
          </button>
        </div>
        {tools.length > 1 && (
          <div class="tool-filter">
            <input type="search" aria-label="Filter tools" placeholder="Filter tools" value={filter} onInput={(event) => setFilter(event.currentTarget.value)} />
            <p class="count" role="status">
              {filter ? `${shown.length} of ${tools.length} tools` : `${tools.length} tools${headed ? ` in ${groups.length} categories` : ''}`}
            </p>
          </div>
        )}
        {tools.length > 1 && <ToolSearchBox tools={tools} selected={selected} onSelect={onSelect} />}
        {leftOut.length > 0 && <LeftOut lines={leftOut} />}
        {shown.length === 0 && <p class="empty">No tool matches "{filter}".</p>}
        {groups.map(([category, members]) => (
          <section key={category} class="tool-group" aria-label={headed ? `Category ${category}` : undefined}>
            {headed && (
              <h3 class="category">
                {category} <span class="count">{members.length}</span>
              </h3>
            )}
            <ul>
              {members.map((tool) => (
                <li key={tool.name}>
                  <button type="button" class="tool" aria-current={tool.name === selected ? 'true' : undefined} onClick={() => onSelect(tool.name)}>
                    <span class="tool-name">{tool.name}</span>
                    <span class="tool-version">{tool.spec.version}</span>
                    <span class="tool-description">{tool.spec.description}</span>
                    <span class="tool-format">
                      TWYLT {tool.spec.format_version} · {tool.spec.requirements?.tool} {tool.spec.requirements?.format}
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          </section>
        ))}
      </div>
    </nav>
  );
}

/**
 * Search by what a tool does ("open a pull request"), ranked by the server as twylt-mcp's
 * search mode and `twylt search` rank (names split, stemming, synonyms, typos): the best
 * matches, best first, each a button that selects the tool.
 */
function ToolSearchBox({ tools, selected, onSelect }: { tools: readonly ToolInfo[]; selected?: string; onSelect(name: string): void }) {
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<{ query: string; names: string[]; problem?: string } | undefined>();
  useEffect(() => {
    if (query.trim() === '') {
      setFound(undefined);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      searchTools(query, controller.signal).then(
        (answer) => setFound({ query, names: answer.tools.map((tool) => tool.name) }),
        (error: Error) => {
          if (!controller.signal.aborted) setFound({ query, names: [], problem: error.message });
        },
      );
    }, SEARCH_DELAY_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [query]);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const matches = (found?.names ?? []).flatMap((name) => byName.get(name) ?? []);
  return (
    <section class="tool-search" aria-label="Search tools">
      <input type="search" aria-label="Search tools by what they do" placeholder="Search by what it does" value={query} onInput={(event) => setQuery(event.currentTarget.value)} />
      {found && (
        <>
          <p class="count" role="status">
            {found.problem ?? (matches.length === 0 ? `No tool fits "${found.query}".` : `${matches.length} best match${matches.length === 1 ? '' : 'es'}`)}
          </p>
          <ol class="search-results" aria-label="Best matches">
            {matches.map((tool) => (
              <li key={tool.name}>
                <button type="button" class="tool" aria-current={tool.name === selected ? 'true' : undefined} onClick={() => onSelect(tool.name)}>
                  <span class="tool-name">{tool.name}</span>
                  <span class="tool-description">{tool.spec.description}</span>
                </button>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}

/** The tools not served, each with why: closed, so that a long list does not push the tools down. */
function LeftOut({ lines }: { lines: readonly string[] }) {
  return (
    <section class="left-out" aria-label="Left out">
      <details>
        <summary>
          {lines.length} tool{lines.length === 1 ? '' : 's'} left out
        </summary>
        <ul>
          {lines.map((line, index) => (
            <li key={index}>{line}</li>
          ))}
        </ul>
      </details>
    </section>
  );
}

/** Every word of the filter appears in the tool's name, description or category (any case). */
function matches(tool: ToolInfo, filter: string): boolean {
  const text = `${tool.name} ${tool.spec.description ?? ''} ${tool.category}`.toLowerCase();
  return filter.toLowerCase().split(/\s+/).every((word) => text.includes(word));
}

/** The tools by category, categories in name order, tools in their served order. */
function groupByCategory(tools: readonly ToolInfo[]): Array<[string, ToolInfo[]]> {
  const groups = new Map<string, ToolInfo[]>();
  for (const tool of tools) {
    const members = groups.get(tool.category);
    if (members) members.push(tool);
    else groups.set(tool.category, [tool]);
  }
  return [...groups].sort(([a], [b]) => a.localeCompare(b));
}

export type DescribeShown = { mode: DescribeMode; text?: string; problem?: string };

export function ToolHeader({ tool, describe, onDescribe, onCloseDescribe }: { tool: ToolInfo; describe?: DescribeShown; onDescribe(mode: DescribeMode): void; onCloseDescribe(): void }) {
  const requirements = tool.spec.requirements;
  return (
    <header class="tool-header">
      <div class="title">
        <h1>{tool.name}</h1>
        <span class="badge">v{tool.spec.version}</span>
        <span class="badge">TWYLT {tool.spec.format_version}</span>
      </div>
      {tool.spec.description && <p class="description">{tool.spec.description}</p>}
      <dl class="facts">
        <div>
          <dt>command</dt>
          <dd>
            <code>{tool.command}</code>
          </dd>
        </div>
        <div>
          <dt>requirements</dt>
          <dd>
            {requirements ? `${requirements.tool} · ${requirements.format}` : 'none published'}
            {requirements?.content && (
              <details>
                <summary>content</summary>
                <pre class="requirements">{requirements.content}</pre>
              </details>
            )}
          </dd>
        </div>
      </dl>
      <div class="describe" role="group" aria-label="Describe">
        <span class="describe-label">describe</span>
        {DESCRIBE_MODES.map((mode) => (
          <button key={mode} type="button" class="small" aria-pressed={describe?.mode === mode} onClick={() => onDescribe(mode)}>
            {mode}
          </button>
        ))}
      </div>
      {describe && (
        <section class="describe-output" aria-label={`Describe ${describe.mode}`}>
          <div class="panel-head">
            <h2>
              describe <code>{describe.mode}</code>
            </h2>
            <button type="button" class="small" onClick={onCloseDescribe}>
              Close
            </button>
          </div>
          {describe.problem ? <p class="status status-failed">{describe.problem}</p> : describe.text === undefined ? <p class="running">Asking the tool…</p> : describe.mode === 'brief' ? <pre>{describe.text}</pre> : <JsonText text={describe.text} />}
        </section>
      )}
    </header>
  );
}
