/**
 * The inspector page: tools on the left; for the selected tool its input (a form from its
 * schema, or JSON), the call's result beside it, and the history of calls below.
 */
import { useEffect, useState } from 'preact/hooks';
import type { DescribeMode } from '../../protocol/constants.js';
import type { CallRecord, ToolInfo, TransportName } from '../types.js';
import { callTool, describeTool, loadHistory, loadTools, reloadTools } from './api.js';
import { removeAt, setAt, type Path } from './draft.js';
import { FormContext, InputForm, fieldId, type FormEnv } from './Form.js';
import { HistoryPanel } from './History.js';
import { fromPlain, isObject, parse, stringify, type Json } from './json.js';
import { ResultPanel, type Shown } from './Result.js';
import { arrange, fieldOf, initialValue } from './schema.js';
import { ToolHeader, ToolList, type DescribeShown } from './Tools.js';

/** What the user is editing for one tool; kept per tool, so switching tools loses nothing. */
interface Session {
  draft: Json;
  view: 'form' | 'json';
  /** The JSON view's text, as typed. */
  jsonText: string;
  /** Why jsonText is not an input object yet; '' when it is. */
  jsonProblem: string;
  transport: TransportName;
  /** The time-out field's text. */
  timeout: string;
}

const TRANSPORTS: { name: TransportName; label: string }[] = [
  { name: 'cli', label: 'argument (cli)' },
  { name: 'stdin', label: 'stdin' },
  { name: 'file', label: 'file (input.json)' },
];

function startingDraft(tool: ToolInfo): Json {
  const root = tool.spec.inputSchema;
  const value = initialValue(fieldOf(root, root), root);
  return isObject(value) ? value : {};
}

function newSession(tool: ToolInfo): Session {
  const draft = startingDraft(tool);
  return { draft, view: 'form', jsonText: stringify(draft), jsonProblem: '', transport: tool.transport, timeout: String(tool.timeoutMs) };
}

/** A form edit's result, its keys in the schema's order. */
function ordered(tool: ToolInfo, draft: Json | undefined): Json {
  const root = tool.spec.inputSchema;
  return arrange(draft, root, root) ?? {};
}

/** A session showing `draft` in whichever view it has. */
function withDraft(session: Session, draft: Json): Session {
  return { ...session, draft, jsonText: stringify(draft), jsonProblem: '' };
}

export function App() {
  const [tools, setTools] = useState<ToolInfo[]>();
  const [leftOut, setLeftOut] = useState<string[]>([]);
  const [fatal, setFatal] = useState('');
  const [selected, setSelected] = useState<string>();
  const [sessions, setSessions] = useState<Record<string, Session>>({});
  const [shown, setShown] = useState<Shown>();
  const [running, setRunning] = useState<AbortController>();
  const [calls, setCalls] = useState<CallRecord[]>([]);
  const [describe, setDescribe] = useState<DescribeShown>();
  const [reloading, setReloading] = useState(false);
  const [notice, setNotice] = useState('');

  useEffect(() => {
    Promise.all([loadTools(), loadHistory()])
      .then(([list, history]) => {
        setTools(list.tools);
        setLeftOut(list.leftOut ?? []);
        setCalls(history.calls);
        const wanted = decodeURIComponent(location.hash.slice(1));
        setSelected(list.tools.some((tool) => tool.name === wanted) ? wanted : list.tools[0]?.name);
      })
      .catch((error: Error) => setFatal(error.message));
  }, []);

  const tool = tools?.find((candidate) => candidate.name === selected);
  const session = tool ? (sessions[tool.name] ?? newSession(tool)) : undefined;
  const update = (target: ToolInfo, change: (session: Session) => Session) =>
    setSessions((all) => ({ ...all, [target.name]: change(all[target.name] ?? newSession(target)) }));

  const select = (name: string) => {
    setSelected(name);
    setDescribe(undefined);
    history.replaceState(null, '', `#${encodeURIComponent(name)}`);
  };

  const record = shown && 'record' in shown ? shown.record : undefined;
  const issues = record && tool && record.tool === tool.name && record.stage === 'input' ? (record.error?.issues ?? []) : [];
  const env: FormEnv | undefined = tool && {
    root: tool.spec.inputSchema,
    edit: (path: Path, next: Json | undefined) => update(tool, (s) => withDraft(s, ordered(tool, setAt(s.draft, path, next)))),
    remove: (path: Path) => update(tool, (s) => withDraft(s, ordered(tool, removeAt(s.draft, path)))),
    issues,
  };

  async function run(target: ToolInfo, inputJson: string, transport: TransportName, timeoutMs: number) {
    const controller = new AbortController();
    setRunning(controller);
    // The result panel stays at the top beside a tall form: bring it into view, with its Cancel.
    requestAnimationFrame(() => document.querySelector('.result')?.scrollIntoView({ block: 'nearest' }));
    try {
      setShown({ record: await callTool(target.name, inputJson, transport, timeoutMs, controller.signal) });
    } catch (error) {
      setShown({ problem: controller.signal.aborted ? 'Cancelled: the tool was stopped.' : (error as Error).message });
    } finally {
      setRunning(undefined);
    }
    // Another tab's calls are in the server's history too.
    loadHistory()
      .then((history) => setCalls(history.calls))
      .catch(() => {});
  }

  function call() {
    if (!tool || !session) return;
    if (session.view === 'json' && session.jsonProblem) return setShown({ problem: `The input is not a JSON object yet: ${session.jsonProblem}` });
    const timeoutMs = Number(session.timeout);
    if (!/^\d+$/.test(session.timeout.trim()) || timeoutMs < 1) return setShown({ problem: `The time-out must be a whole number of milliseconds, got "${session.timeout}"` });
    void run(tool, stringify(session.draft, 0), session.transport, timeoutMs);
  }

  /** Put a past call's tool, input, transport and time-out back in the page. */
  function load(past: CallRecord): ToolInfo | undefined {
    const target = tools?.find((candidate) => candidate.name === past.tool);
    if (!target) {
      setNotice(`The tool "${past.tool}" is no longer served.`);
      return undefined;
    }
    select(target.name);
    update(target, (s) => ({ ...withDraft(s, parse(past.input)), transport: past.transport, timeout: String(past.timeoutMs) }));
    return target;
  }

  function showIssue(path: string) {
    if (tool && session?.view === 'json') update(tool, (s) => ({ ...s, view: 'form' }));
    requestAnimationFrame(() => {
      const element = document.getElementById(fieldId(path));
      element?.scrollIntoView({ block: 'center', behavior: 'smooth' });
      const target = element instanceof HTMLFieldSetElement ? element.querySelector<HTMLElement>('input, select, textarea, button') : element;
      target?.focus({ preventScroll: true });
    });
  }

  function askDescribe(mode: DescribeMode) {
    if (!tool) return;
    setDescribe({ mode });
    describeTool(tool.name, mode)
      .then((answer) => setDescribe((now) => (now?.mode === mode ? { mode, text: answer.text } : now)))
      .catch((error: Error) => setDescribe((now) => (now?.mode === mode ? { mode, problem: error.message } : now)));
  }

  function reload() {
    setReloading(true);
    reloadTools()
      .then((list) => {
        setTools(list.tools);
        setLeftOut(list.leftOut ?? []);
        setNotice('');
        if (!list.tools.some((candidate) => candidate.name === selected)) setSelected(list.tools[0]?.name);
      })
      .catch((error: Error) => setNotice(error.message))
      .finally(() => setReloading(false));
  }

  if (fatal) {
    return (
      <div class="fatal" role="alert">
        <h1>twylt inspect</h1>
        <p>{fatal}</p>
        <p>Open the link that twylt inspect printed on its terminal; each run has a new one.</p>
      </div>
    );
  }
  if (!tools) return <p class="loading">Loading the tools…</p>;

  return (
    <div class="app">
      <header class="topbar">
        <span class="brand">
          twylt <b>inspect</b>
        </span>
        <span class="sub">
          {tools.length} tool{tools.length === 1 ? '' : 's'}
          {leftOut.length > 0 && ` · ${leftOut.length} left out`} · calls run on this machine
        </span>
      </header>
      <ToolList tools={tools} leftOut={leftOut} selected={selected} onSelect={select} onReload={reload} reloading={reloading} />
      <main>
        {notice && (
          <div class="notice" role="alert">
            <pre>{notice}</pre>
            <button type="button" class="small" onClick={() => setNotice('')}>
              Dismiss
            </button>
          </div>
        )}
        {tool && session && env && (
          <>
            <ToolHeader tool={tool} describe={describe} onDescribe={askDescribe} onCloseDescribe={() => setDescribe(undefined)} />
            <div class="work">
              <InputPanel tool={tool} session={session} env={env} update={(change) => update(tool, change)} onCall={call} running={running !== undefined} setNotice={setNotice} />
              <ResultPanel shown={shown} running={running !== undefined} onCancel={() => running?.abort()} onIssue={showIssue} />
            </div>
          </>
        )}
        <HistoryPanel
          calls={calls}
          shownId={record?.id}
          busy={running !== undefined}
          actions={{
            show: (past) => setShown({ record: past }),
            load: (past) => void load(past),
            rerun: (past) => {
              const target = load(past);
              if (target) void run(target, past.input, past.transport, past.timeoutMs);
            },
          }}
        />
      </main>
    </div>
  );
}

function InputPanel({ tool, session, env, update, onCall, running, setNotice }: { tool: ToolInfo; session: Session; env: FormEnv; update(change: (s: Session) => Session): void; onCall(): void; running: boolean; setNotice(text: string): void }) {
  const examples = [...(tool.spec.few_shots ?? []).map((shot) => shot.input), ...(Array.isArray(tool.spec.inputSchema.examples) ? tool.spec.inputSchema.examples : [])].filter(isObject);
  const showForm = () => {
    if (session.jsonProblem) return setNotice(`The JSON view holds no input object yet, so the form cannot show it: ${session.jsonProblem}`);
    update((s) => ({ ...s, view: 'form' }));
  };
  const editJson = (text: string) =>
    update((s) => {
      let value: Json;
      try {
        value = parse(text);
      } catch (error) {
        return { ...s, jsonText: text, jsonProblem: (error as Error).message };
      }
      return isObject(value) ? { ...s, draft: value, jsonText: text, jsonProblem: '' } : { ...s, jsonText: text, jsonProblem: 'the input must be a JSON object, {...}' };
    });
  return (
    <section class="panel input" aria-label="Input">
      <div class="panel-head">
        <h2>Input</h2>
        <div class="tabs" role="tablist" aria-label="Input view">
          <button type="button" role="tab" aria-selected={session.view === 'form'} onClick={showForm}>
            Form
          </button>
          <button type="button" role="tab" aria-selected={session.view === 'json'} onClick={() => update((s) => ({ ...s, view: 'json', jsonText: stringify(s.draft), jsonProblem: '' }))}>
            JSON
          </button>
        </div>
      </div>
      <div class="examples" role="group" aria-label="Examples">
        {examples.map((example, index) => (
          <button key={index} type="button" class="small" aria-label={`Use example ${index + 1}`} title={JSON.stringify(example)} onClick={() => update((s) => withDraft(s, fromPlain(example)))}>
            example {index + 1}
          </button>
        ))}
        <button type="button" class="small subtle" onClick={() => update((s) => withDraft(s, startingDraft(tool)))} title="Back to the schema's defaults">
          Reset
        </button>
      </div>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          onCall();
        }}
      >
        {session.view === 'form' ? (
          <FormContext.Provider value={env}>
            <InputForm value={session.draft} />
          </FormContext.Provider>
        ) : (
          <div class="json-editor">
            <textarea aria-label="Input JSON" class="json" spellcheck={false} rows={14} value={session.jsonText} onInput={(event) => editJson(event.currentTarget.value)} aria-invalid={session.jsonProblem ? 'true' : undefined} />
            {session.jsonProblem && (
              <p class="invalid" role="status">
                Not an input yet: {session.jsonProblem}
              </p>
            )}
          </div>
        )}
        <div class="call-bar">
          <fieldset class="transport">
            <legend>Transport</legend>
            {TRANSPORTS.map(({ name, label }) => (
              <label key={name}>
                <input type="radio" name="transport" value={name} checked={session.transport === name} onChange={() => update((s) => ({ ...s, transport: name }))} />
                {label}
              </label>
            ))}
          </fieldset>
          <label class="timeout">
            Time-out (ms)
            <input type="number" min={1} step={1} value={session.timeout} onInput={(event) => {
              const text = event.currentTarget.value;
              update((s) => ({ ...s, timeout: text }));
            }} />
          </label>
          <button type="submit" class="primary" disabled={running} aria-busy={running}>
            Call
          </button>
        </div>
      </form>
    </section>
  );
}
