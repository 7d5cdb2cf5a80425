/** The Result region: what one call gave back, or why there is nothing to show. */
import { useState } from 'preact/hooks';
import type { CallRecord } from '../types.js';
import { JsonText } from './JsonText.js';

/** What the region shows: a call's record, or a problem before any tool ran. */
export type Shown = { record: CallRecord } | { problem: string };

export function ResultPanel({ shown, running, onCancel, onIssue }: { shown?: Shown; running: boolean; onCancel(): void; onIssue(path: string): void }) {
  return (
    <section class="panel result" aria-label="Result" aria-busy={running}>
      <div class="panel-head">
        <h2>Result</h2>
        {running && (
          <button type="button" class="small" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      {running && <p class="running">Calling…</p>}
      {!running && !shown && <p class="empty">Fill in the input and press Call: the tool's output, or its error, appears here.</p>}
      {!running && shown && 'problem' in shown && <p class="status status-failed">{shown.problem}</p>}
      {!running && shown && 'record' in shown && <RecordView record={shown.record} onIssue={onIssue} />}
    </section>
  );
}

function RecordView({ record, onIssue }: { record: CallRecord; onIssue(path: string): void }) {
  const [view, setView] = useState<'pretty' | 'raw'>('pretty');
  const error = record.error;
  return (
    <div class="record">
      <p class={`status ${record.ok ? (record.outputIssues ? 'status-warn' : 'status-ok') : 'status-failed'}`}>
        {record.ok ? (record.outputIssues ? 'Output does not match the outputSchema' : 'Success') : error?.object?.message ?? error?.kind ?? 'Failed'}
      </p>
      <dl class="facts">
        <Fact name="exit code" value={record.exitCode === null ? 'none' : String(record.exitCode)} />
        {record.stage && <Fact name="stage" value={record.stage} />}
        <Fact name="duration" value={`${record.durationMs} ms`} />
        <Fact name="transport" value={record.transport} />
        <Fact name="call" value={`#${record.id} · ${record.tool} · ${new Date(record.startedAt).toLocaleTimeString()}`} />
      </dl>
      {error && (
        <div class="failure">
          <p class="message">
            <span class="kind">{error.kind}</span> {error.message}
          </p>
          {error.issues.length > 0 && (
            <ul class="errors" aria-label="Errors">
              {error.issues.map((issue, index) => (
                <li key={index}>
                  <button type="button" class="link" onClick={() => onIssue(issue.path)} title="Show the field">
                    <code>{issue.path}</code>
                  </button>{' '}
                  {issue.message} <span class="issue-code">{issue.code}</span>
                </li>
              ))}
            </ul>
          )}
          {error.object && (
            <details open={error.issues.length === 0}>
              <summary>Error object</summary>
              <JsonText text={JSON.stringify(error.object, null, 2)} label="Error object" />
            </details>
          )}
        </div>
      )}
      {record.output && (
        <div class="output">
          <div class="tabs" role="tablist" aria-label="Output view">
            {(['pretty', 'raw'] as const).map((name) => (
              <button key={name} type="button" role="tab" aria-selected={view === name} onClick={() => setView(name)}>
                {name === 'pretty' ? 'Pretty' : 'Raw'}
              </button>
            ))}
          </div>
          <div role="tabpanel" aria-label={view === 'pretty' ? 'Pretty output' : 'Raw output'}>
            {view === 'pretty' ? <JsonText text={record.output.pretty} /> : <pre class="raw">{record.output.text}</pre>}
          </div>
        </div>
      )}
      {record.outputIssues && (
        <ul class="errors warn" aria-label="Output issues">
          {record.outputIssues.map((issue, index) => (
            <li key={index}>
              <code>{issue.path || '/'}</code> {issue.message}
            </li>
          ))}
        </ul>
      )}
      {record.stderr !== '' && (
        <details open={!record.ok}>
          <summary>stderr</summary>
          <pre class="stderr" aria-label="stderr">
            {record.stderr}
          </pre>
        </details>
      )}
      <details>
        <summary>Input sent</summary>
        <JsonText text={record.input} label="Input sent" />
      </details>
    </div>
  );
}

function Fact({ name, value }: { name: string; value: string }) {
  return (
    <div>
      <dt>{name}</dt>
      <dd>{value}</dd>
    </div>
  );
}
