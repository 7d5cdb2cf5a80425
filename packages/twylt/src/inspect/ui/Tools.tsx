/** The tool list, and the selected tool's identity, requirements and describe modes. */
import { DESCRIBE_MODES, type DescribeMode } from '../../protocol/constants.js';
import type { ToolInfo } from '../types.js';
import { JsonText } from './JsonText.js';

export function ToolList({ tools, selected, onSelect, onReload, reloading }: { tools: readonly ToolInfo[]; selected?: string; onSelect(name: string): void; onReload(): void; reloading: boolean }) {
  return (
    <nav class="tools" aria-label="Tools">
      <div class="tools-inner">
        <div class="panel-head">
          <h2>Tools</h2>
          <button type="button" class="small" onClick={onReload} disabled={reloading} title="Describe every tool again">
            {reloading ? 'Reloading…' : 'Reload'}
          </button>
        </div>
        <ul>
          {tools.map((tool) => (
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
      </div>
    </nav>
  );
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
