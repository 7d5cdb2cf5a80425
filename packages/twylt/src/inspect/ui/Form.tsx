/**
 * The form drawn from a tool's inputSchema. It edits the shared Json value (draft.ts) in
 * place, path by path, so the JSON view always shows what the form holds, and the other
 * way round.
 *
 * Every control's accessible name is its field's path (`point.x`, `tags[0].label`), the
 * path TWYLT's issues carry, so each issue of a failed call is drawn under its own field.
 * The browser checks what it can as the user types (required, min/max/step, lengths, the
 * schema's pattern with JSON Schema's meaning); the call still goes out, so the tool's own
 * answer to a wrong value can be seen too.
 */
import { createContext, type ComponentChildren } from 'preact';
import { useContext, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Issue } from '../../protocol/issues.js';
import { getAt, pathText, type Path } from './draft.js';
import { Num, isObject, parse, same, stringify, type Json } from './json.js';
import { fieldOf, initialValue, type ArrayField, type ChoiceField, type Field, type NumberField, type ObjectField, type Schema, type StringField } from './schema.js';

export interface FormEnv {
  /** The inputSchema, which `$ref`s point into. */
  root: Schema;
  /** Put `next` at `path` (undefined: unset). */
  edit(path: Path, next: Json | undefined): void;
  /** Remove the array item or key at `path`. */
  remove(path: Path): void;
  /** Issues of the last failed call, drawn beside their fields. */
  issues: readonly Issue[];
}

export const FormContext = createContext<FormEnv>({ root: true, edit() {}, remove() {}, issues: [] });

/** The element id of a field, from its path (Errors list links jump to it). */
export const fieldId = (path: string): string => `field:${path.replace(/\s/g, '_')}`;

/** The whole form: the root object's fields, or one JSON editor when the schema is not an object. */
export function InputForm({ value }: { value: Json }) {
  const env = useContext(FormContext);
  const field = useMemo(() => fieldOf(env.root, env.root), [env.root]);
  if (field.kind !== 'object') {
    return <LeafView field={field} path={[]} name="input" value={value} required />;
  }
  const declared = field.properties.map(([name]) => name);
  const rootIssues = env.issues.filter((issue) => issue.path === '<root>' || (!/[.[]/.test(issue.path) && !declared.includes(issue.path)));
  return (
    <div class="form-root">
      {rootIssues.length > 0 && <IssueList issues={rootIssues} at="<root>" />}
      <Properties field={field} path={[]} value={value} />
    </div>
  );
}

interface FieldProps {
  schema: Schema;
  path: Path;
  /** The label shown: the key, or `[i]` in an array. */
  name: string;
  value: Json | undefined;
  required: boolean;
}

function FieldView({ schema, ...props }: FieldProps) {
  const { root } = useContext(FormContext);
  const field = useMemo(() => fieldOf(schema, root), [schema, root]);
  if (field.kind === 'object' && props.value !== null) return <ObjectView field={field} {...props} />;
  if (field.kind === 'array' && props.value !== null) return <ArrayView field={field} {...props} />;
  return <LeafView field={field} {...props} />;
}

/** The fields of an object, in schema order, and a note on keys the schema does not declare. */
function Properties({ field, path, value }: { field: ObjectField; path: Path; value: Json | undefined }) {
  const declared = field.properties.map(([name]) => name);
  const others = isObject(value) ? Object.keys(value).filter((key) => !declared.includes(key)) : [];
  return (
    <>
      {field.properties.map(([name, schema]) => (
        <FieldView key={name} schema={schema} path={[...path, name]} name={name} value={getAt(value, [name])} required={field.required.includes(name)} />
      ))}
      {others.length > 0 && (
        <p class="note">
          Also in the input, not in the schema (edit them in the JSON view): {others.map((key) => <code key={key}>{key}</code>)}
        </p>
      )}
    </>
  );
}

function ObjectView({ field, path, name, value, required }: Omit<FieldProps, 'schema'> & { field: ObjectField }) {
  const env = useContext(FormContext);
  const text = pathText(path);
  const declared = field.properties.map(([key]) => key);
  const issues = env.issues.filter((issue) => issue.path === text || strayChild(issue.path, text, declared));
  return (
    <Group field={field} path={path} name={name} value={value} required={required} present={isObject(value)} issues={issues}>
      {isObject(value) ? (
        <div class="group-body">
          <Properties field={field} path={path} value={value} />
        </div>
      ) : (
        <button type="button" class="add" aria-label={`Add ${text}`} onClick={() => env.edit(path, initialValue(field, env.root) ?? {})}>
          + Add {name}
        </button>
      )}
    </Group>
  );
}

function ArrayView({ field, path, name, value, required }: Omit<FieldProps, 'schema'> & { field: ArrayField }) {
  const env = useContext(FormContext);
  const text = pathText(path);
  const items = Array.isArray(value) ? value : [];
  const full = field.maxItems !== undefined && items.length >= field.maxItems;
  const add = () => env.edit([...path, items.length], initialValue(fieldOf(field.items, env.root), env.root) ?? null);
  return (
    <Group field={field} path={path} name={name} value={value} required={required} present={Array.isArray(value)} issues={env.issues.filter((issue) => issue.path === text)}>
      {items.length > 0 && (
        <ol class="items">
          {items.map((item, index) => (
            <li key={index}>
              <FieldView schema={field.items} path={[...path, index]} name={`[${index}]`} value={item} required />
              <SmallButton label={`Remove ${pathText([...path, index])}`} onClick={() => env.remove([...path, index])}>
                Remove
              </SmallButton>
            </li>
          ))}
        </ol>
      )}
      {!Array.isArray(value) && <p class="unset">not set</p>}
      <button type="button" class="add" aria-label={`Add item to ${text}`} disabled={full} onClick={add}>
        + Add item
      </button>
    </Group>
  );
}

/** An object or array: a fieldset named by its path, with its head, help, contents and issues. */
function Group({ field, path, name, value, required, present, issues, children }: Omit<FieldProps, 'schema'> & { field: Field; present: boolean; issues: readonly Issue[]; children: ComponentChildren }) {
  const env = useContext(FormContext);
  const text = pathText(path);
  return (
    <fieldset class="group" id={fieldId(text)} aria-label={text} data-path={text}>
      <legend>
        <FieldHead name={name} field={field} required={required} />
        <NullToggle field={field} path={path} value={value} required={required} />
        {!required && present && (
          <SmallButton label={`Remove ${text}`} onClick={() => env.edit(path, undefined)}>
            Remove
          </SmallButton>
        )}
      </legend>
      {field.description && <p class="help">{field.description}</p>}
      {field.hints.length > 0 && <p class="hints">{field.hints.join(' · ')}</p>}
      {children}
      {issues.length > 0 && <IssueList issues={issues} at={text} />}
    </fieldset>
  );
}

/** One value: a labelled control with its help, hints, the browser's complaint and the tool's issues. */
function LeafView({ field, path, name, value, required }: Omit<FieldProps, 'schema'> & { field: Field }) {
  const env = useContext(FormContext);
  const text = pathText(path);
  const id = fieldId(text);
  // A JSON editor also owns the issues inside its value (a map's keys, say).
  const issues = env.issues.filter((issue) => issue.path === text || (field.kind === 'json' && below(issue.path, text)));
  const describedBy = [field.description && `${id}:help`, issues.length > 0 && `${id}:issues`].filter(Boolean).join(' ') || undefined;
  const control: ControlProps = {
    id,
    label: path.length === 0 ? 'input' : text,
    value,
    required,
    inArray: typeof path[path.length - 1] === 'number',
    describedBy,
    invalid: issues.length > 0,
    set: (next) => env.edit(path, next),
  };
  const isNull = value === null && field.nullable;
  const checkbox = field.kind === 'boolean' && !isNull && (required || field.default !== undefined);
  return (
    <div class={`field field-${field.kind}${checkbox ? ' field-check' : ''}`} data-path={text}>
      <div class="field-head">
        <label for={id}>
          <FieldHead name={name} field={field} required={required} />
        </label>
        <NullToggle field={field} path={path} value={value} required={required} />
      </div>
      {isNull ? <input id={id} aria-label={control.label} class="null-value" value="null" disabled /> : <Control field={field} {...control} />}
      {field.description && (
        <p class="help" id={`${id}:help`}>
          {field.description}
        </p>
      )}
      {field.hints.length > 0 && <p class="hints">{field.hints.join(' · ')}</p>}
      {issues.length > 0 && <IssueList issues={issues} id={`${id}:issues`} at={text} />}
    </div>
  );
}

function FieldHead({ name, field, required }: { name: string; field: Field; required: boolean }) {
  return (
    <>
      <span class="name">{name}</span>
      {required && !name.startsWith('[') && (
        <span class="required" aria-hidden="true" title="required">
          *
        </span>
      )}
      <span class="type" aria-hidden="true">
        {field.type}
      </span>
    </>
  );
}

/** For a nullable field: a switch between null and a value. */
function NullToggle({ field, path, value, required }: { field: Field; path: Path; value: Json | undefined; required: boolean }) {
  const env = useContext(FormContext);
  if (!field.nullable) return null;
  const text = pathText(path);
  const toggle = (on: boolean) => env.edit(path, on ? null : required ? initialValue({ ...field, nullable: false }, env.root) : undefined);
  return (
    <label class="null-toggle">
      <input type="checkbox" aria-label={`${text} is null`} checked={value === null} onChange={(event) => toggle(event.currentTarget.checked)} />
      null
    </label>
  );
}

function SmallButton({ label, onClick, children }: { label: string; onClick: () => void; children: ComponentChildren }) {
  return (
    <button type="button" class="small" aria-label={label} onClick={onClick}>
      {children}
    </button>
  );
}

/** Issues under a field; `at` is that field's path, and an issue deeper in it names its own. */
function IssueList({ issues, id, at }: { issues: readonly Issue[]; id?: string; at: string }) {
  return (
    <ul class="issues" id={id}>
      {issues.map((issue, index) => (
        <li key={index}>
          {issue.path !== at && <code class="issue-path">{issue.path}</code>}
          {issue.message}
          <span class="issue-code">{issue.code}</span>
        </li>
      ))}
    </ul>
  );
}

interface ControlProps {
  id: string;
  label: string;
  value: Json | undefined;
  required: boolean;
  /** An array item has no "unset": an emptied text is "", an emptied number null. */
  inArray: boolean;
  describedBy: string | undefined;
  invalid: boolean;
  set(next: Json | undefined): void;
}

function Control({ field, ...props }: ControlProps & { field: Field }) {
  switch (field.kind) {
    case 'string':
      return <StringControl field={field} {...props} />;
    case 'number':
      return <NumberControl field={field} {...props} />;
    case 'boolean':
      return props.required || field.default !== undefined ? <CheckControl {...props} /> : <ChoiceControl field={{ ...field, kind: 'choice', options: [true, false] }} {...props} />;
    case 'choice':
      return <ChoiceControl field={field} {...props} />;
    default:
      return <JsonControl {...props} />;
  }
}

/**
 * The browser's verdict on a control, shown once the user has typed in it; `custom` is a
 * check the browser cannot make itself ('' when it passes).
 */
function useValidity(custom: string): { ref: { current: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement | null }; touch(): void; message: string } {
  const ref = useRef<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement | null>(null);
  const [touched, setTouched] = useState(false);
  const [message, setMessage] = useState('');
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    element.setCustomValidity(custom);
    setMessage(touched && !element.validity.valid ? element.validationMessage : '');
  });
  return { ref, touch: () => setTouched(true), message };
}

/**
 * The browser's complaint, unless the tool's own issues are shown under the field: the same
 * fault is not told twice, and the tool's word, on the value it was sent, is the one kept.
 */
function shownComplaint(props: ControlProps, message: string): string {
  return props.invalid ? '' : message;
}

function Complaint({ id, message }: { id: string; message: string }) {
  return message ? (
    <p class="invalid" id={`${id}:invalid`} role="status">
      {message}
    </p>
  ) : null;
}

const common = (props: ControlProps, message: string) => ({
  id: props.id,
  'aria-label': props.label,
  'aria-describedby': [props.describedBy, message && `${props.id}:invalid`].filter(Boolean).join(' ') || undefined,
  'aria-invalid': props.invalid || message !== '' ? ('true' as const) : undefined,
  required: props.required && !props.inArray,
});

function StringControl({ field, ...props }: ControlProps & { field: StringField }) {
  const text = typeof props.value === 'string' ? props.value : '';
  const validity = useValidity(patternProblem(field.pattern, text));
  const complaint = shownComplaint(props, validity.message);
  const onInput = (event: Event) => {
    const typed = (event.currentTarget as HTMLInputElement).value;
    validity.touch();
    props.set(typed === '' && !props.inArray ? undefined : typed);
  };
  const attributes = { ...common(props, complaint), minLength: field.minLength, maxLength: field.maxLength, value: text, onInput, onBlur: validity.touch };
  const type = field.format === 'email' ? 'email' : field.format === 'uri' ? 'url' : field.format === 'date' ? 'date' : undefined;
  return (
    <>
      {type || field.pattern ? (
        <input {...attributes} type={(type ?? 'text') as 'text'} ref={validity.ref as { current: HTMLInputElement }} />
      ) : (
        <textarea {...attributes} rows={1} ref={validity.ref as { current: HTMLTextAreaElement }} />
      )}
      <Complaint id={props.id} message={complaint} />
    </>
  );
}

/** JSON Schema's `pattern`: a search anywhere in the text (HTML's pattern attribute must match all of it). */
function patternProblem(pattern: string | undefined, text: string): string {
  if (pattern === undefined || text === '') return '';
  try {
    return new RegExp(pattern, 'u').test(text) ? '' : `Must match the pattern ${pattern}`;
  } catch {
    return '';
  }
}

function NumberControl({ field, ...props }: ControlProps & { field: NumberField }) {
  const text = props.value instanceof Num ? props.value.text : '';
  const step = field.multipleOf ?? (field.integer ? 1 : undefined);
  // A step counts from `min`: a min off the step's grid would shift it, so it is checked here instead.
  const minOnGrid = field.minimum !== undefined && (step === undefined || Number.isInteger(field.minimum / step));
  const validity = useValidity(numberProblem(field, text, minOnGrid));
  const complaint = shownComplaint(props, validity.message);
  const onInput = (event: Event) => {
    const typed = (event.currentTarget as HTMLInputElement).value;
    validity.touch();
    props.set(typed === '' ? (props.inArray ? null : undefined) : new Num(jsonNumber(typed)));
  };
  return (
    <>
      <input
        {...common(props, complaint)}
        type="number"
        inputMode={field.integer ? 'numeric' : 'decimal'}
        step={step ?? 'any'}
        min={minOnGrid ? field.minimum : undefined}
        max={field.maximum}
        value={text}
        onInput={onInput}
        onBlur={validity.touch}
        ref={validity.ref as { current: HTMLInputElement }}
      />
      <Complaint id={props.id} message={complaint} />
    </>
  );
}

function numberProblem(field: NumberField, text: string, minOnGrid: boolean): string {
  if (text === '') return '';
  const value = Number(text);
  if (field.exclusiveMinimum !== undefined && !(value > field.exclusiveMinimum)) return `Must be greater than ${field.exclusiveMinimum}`;
  if (field.exclusiveMaximum !== undefined && !(value < field.exclusiveMaximum)) return `Must be less than ${field.exclusiveMaximum}`;
  if (!minOnGrid && field.minimum !== undefined && value < field.minimum) return `Must be ${field.minimum} or more`;
  return '';
}

/** A number input's text (HTML allows `.5`, `01`) as JSON number syntax, digits kept. */
function jsonNumber(text: string): string {
  const json = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
  if (json.test(text)) return text;
  const mended = text.replace(/^(-?)\./, '$10.').replace(/^(-?)0+(?=\d)/, '$1').replace(/\.(?=[eE]|$)/, '');
  return json.test(mended) ? mended : String(Number(text));
}

function CheckControl(props: ControlProps) {
  const attributes = common(props, '');
  return <input {...attributes} required={false} type="checkbox" checked={props.value === true} onChange={(event) => props.set(event.currentTarget.checked)} />;
}

function ChoiceControl({ field, ...props }: ControlProps & { field: ChoiceField }) {
  const validity = useValidity('');
  const complaint = shownComplaint(props, validity.message);
  const index = field.options.findIndex((option) => same(option, props.value));
  // A value from the JSON view that is not among the options is shown, not dropped.
  const stray = props.value !== undefined && index === -1;
  return (
    <>
      <select
        {...common(props, complaint)}
        ref={validity.ref as { current: HTMLSelectElement }}
        value={stray ? 'stray' : index === -1 ? '' : String(index)}
        onChange={(event) => {
          validity.touch();
          const chosen = event.currentTarget.value;
          if (chosen === 'stray') return;
          props.set(chosen === '' ? (props.inArray ? null : undefined) : field.options[Number(chosen)]);
        }}
      >
        {(!props.required || index === -1) && <option value="">{props.required ? 'choose…' : field.default !== undefined ? `(default: ${optionText(field.default)})` : '(not set)'}</option>}
        {stray && <option value="stray">{stringify(props.value!, 0)} (not an option)</option>}
        {field.options.map((option, i) => (
          <option key={i} value={String(i)}>
            {optionText(option)}
          </option>
        ))}
      </select>
      <Complaint id={props.id} message={complaint} />
    </>
  );
}

const optionText = (option: Json): string => (typeof option === 'string' ? option : stringify(option, 0));

/** Any JSON value, typed as JSON: for maps, free-form objects, unions, tuples and `{}`. */
function JsonControl(props: ControlProps) {
  // What was typed, and the value it stood for when typed; a value from elsewhere (the JSON
  // view, an example) replaces the text, while half-typed JSON stays until it parses.
  const [typed, setTyped] = useState<{ text: string; value: Json | undefined; problem: string } | undefined>(undefined);
  const current = typed && typed.value === props.value ? typed : { text: props.value === undefined ? '' : stringify(props.value), problem: '' };
  const validity = useValidity(current.problem);
  const complaint = shownComplaint(props, validity.message);
  const onInput = (event: Event) => {
    const text = (event.currentTarget as HTMLTextAreaElement).value;
    validity.touch();
    if (text.trim() === '') {
      const value = props.inArray ? null : undefined;
      setTyped({ text, value, problem: '' });
      return props.set(value);
    }
    try {
      const value = parse(text);
      setTyped({ text, value, problem: '' });
      props.set(value);
    } catch (error) {
      setTyped({ text, value: props.value, problem: `Not JSON yet: ${(error as Error).message}` });
    }
  };
  return (
    <>
      <textarea
        {...common(props, complaint)}
        class="json"
        spellcheck={false}
        rows={3}
        placeholder="JSON, e.g. {} or []"
        value={current.text}
        onInput={onInput}
        onBlur={validity.touch}
        ref={validity.ref as { current: HTMLTextAreaElement }}
      />
      <Complaint id={props.id} message={complaint} />
    </>
  );
}

/** `point.x` is below `point`; `tags[0]` is below `tags`. */
function below(path: string, ancestor: string): boolean {
  if (ancestor === '<root>') return path !== '<root>';
  return path.startsWith(`${ancestor}.`) || path.startsWith(`${ancestor}[`);
}

/** An issue on a key of the object at `parent` that its schema does not declare (unknown_field). */
function strayChild(path: string, parent: string, declared: readonly string[]): boolean {
  if (!path.startsWith(`${parent}.`)) return false;
  const key = path.slice(parent.length + 1);
  return !/[.[]/.test(key) && !declared.includes(key);
}
