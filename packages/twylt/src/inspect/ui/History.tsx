/** The calls since the server started, newest first; each can be shown, loaded into the form, or run again. */
import type { CallRecord } from '../types.js';

export interface HistoryActions {
  show(record: CallRecord): void;
  load(record: CallRecord): void;
  rerun(record: CallRecord): void;
}

export function HistoryPanel({ calls, shownId, busy, actions }: { calls: readonly CallRecord[]; shownId?: number; busy: boolean; actions: HistoryActions }) {
  return (
    <section class="panel history" aria-label="History">
      <div class="panel-head">
        <h2>History</h2>
        <span class="count">{calls.length === 0 ? 'no calls yet' : `${calls.length} call${calls.length === 1 ? '' : 's'}`}</span>
      </div>
      {calls.length > 0 && (
        <ol class="calls" reversed>
          {[...calls].reverse().map((record) => (
            <li key={record.id} class={record.id === shownId ? 'shown' : undefined}>
              <button type="button" class="call-summary" aria-label={`Show call #${record.id}`} onClick={() => actions.show(record)}>
                <span class={`dot ${record.ok ? (record.outputIssues ? 'warn' : 'ok') : 'failed'}`} aria-hidden="true" />
                <span class="call-id">#{record.id}</span>
                <span class="call-tool">{record.tool}</span>
                <span class="call-outcome">{record.ok ? 'ok' : record.exitCode === null ? record.error?.kind ?? 'failed' : `exit ${record.exitCode}`}</span>
                <span class="call-meta">
                  {record.transport} · {record.durationMs} ms · {new Date(record.startedAt).toLocaleTimeString()}
                </span>
                <code class="call-input">{oneLine(record.input)}</code>
              </button>
              <div class="call-actions">
                <button type="button" class="small" aria-label={`Load call #${record.id}`} onClick={() => actions.load(record)}>
                  Load
                </button>
                <button type="button" class="small" aria-label={`Re-run call #${record.id}`} disabled={busy} onClick={() => actions.rerun(record)}>
                  Re-run
                </button>
              </div>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function oneLine(json: string): string {
  const flat = json.replace(/\n\s*/g, ' ');
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
}
