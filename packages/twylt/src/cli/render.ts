/** Readable text for people at a terminal: a tool's spec and a call's failure. */
import type { FewShot, JsonSchema, ToolSpec } from '../client/types.js';
import { SchemaMismatchError, TwyltClientError, ToolError } from '../client/errors.js';
import { deref, fieldsOf } from '../conformance/schema-walk.js';
import { isRecord } from '../protocol/record.js';
import { isObjectSchema } from '../schema/json-schema-subset.js';
import type { Style } from './style.js';

const CONSTRAINTS = ['minimum', 'exclusiveMinimum', 'maximum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'pattern', 'format', 'minItems', 'maxItems'];

export function renderSpec(spec: ToolSpec, style: Style): string {
  const lines = [style.bold(`${spec.name} ${spec.version}`)];
  if (spec.description) lines.push(spec.description);
  const req = spec.requirements;
  lines.push('', `${style.bold('Requirements:')} ${req.tool} (${req.format})${req.content.trim() ? '' : ', none'}`);
  if (req.content.trim()) lines.push(...req.content.trimEnd().split('\n').map((line) => `  ${line}`));
  lines.push('', style.bold('Input'), ...fieldLines(spec.inputSchema, spec.inputSchema, 1, style));
  lines.push('', style.bold('Output'), ...fieldLines(spec.outputSchema, spec.outputSchema, 1, style));
  if (spec.few_shots.length > 0) {
    lines.push('', style.bold('Examples'));
    spec.few_shots.forEach((shot: FewShot, i) => lines.push(`  ${i + 1}. ${JSON.stringify(shot.input)}`, `     → ${JSON.stringify(shot.output)}`));
  }
  lines.push('', style.dim(`* required · format ${spec.format_version}`));
  return `${lines.join('\n')}\n`;
}

function fieldLines(schema: JsonSchema, root: JsonSchema, depth: number, style: Style): string[] {
  const resolved = deref(schema, root);
  if (!isObjectSchema(resolved)) return [`${'  '.repeat(depth)}${typeLabel(resolved, root)}`];
  const fields = fieldsOf(resolved, root);
  if (fields.length === 0) return [`${'  '.repeat(depth)}${style.dim('(no fields)')}`];
  const width = Math.max(...fields.map((field) => field.name.length + (field.required ? 2 : 0)));
  return fields.flatMap((field) => {
    const name = field.required ? `${field.name} ${style.red('*')}` : field.name;
    const pad = ' '.repeat(width - field.name.length - (field.required ? 2 : 0));
    const extras = [
      typeof field.schema.description === 'string' ? field.schema.description : '',
      'default' in field.schema ? style.dim(`default ${JSON.stringify(field.schema.default)}`) : '',
      constraintText(field.schema, style),
    ].filter(Boolean);
    const line = `${'  '.repeat(depth)}${name}${pad}  ${style.yellow(typeLabel(field.schema, root))}${extras.length ? `  ${extras.join('  ')}` : ''}`;
    const nested = nestedObject(field.schema, root);
    return depth < 4 && nested ? [line, ...fieldLines(nested, root, depth + 1, style)] : [line];
  });
}

/** The object schema whose fields should be listed under a field (itself, or its array items). */
function nestedObject(schema: JsonSchema, root: JsonSchema): JsonSchema | undefined {
  if (isObjectSchema(schema) && fieldsOf(schema, root).length > 0) return schema;
  const items = schema.type === 'array' ? deref(schema.items, root) : undefined;
  return items && isObjectSchema(items) && fieldsOf(items, root).length > 0 ? items : undefined;
}

function constraintText(schema: JsonSchema, style: Style): string {
  const parts = CONSTRAINTS.filter((key) => key in schema).map((key) => `${key} ${JSON.stringify(schema[key])}`);
  return parts.length ? style.dim(`[${parts.join(', ')}]`) : '';
}

function typeLabel(input: unknown, root: JsonSchema, depth = 0): string {
  const schema = deref(input, root);
  if (depth > 4) return '…';
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) return (schema[key] as unknown[]).map((branch) => typeLabel(branch, root, depth + 1)).join(' | ');
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? (isObjectSchema(schema) ? 'object' : 'any')];
  return types
    .map((type) => (type === 'array' ? `${isRecord(schema.items) ? grouped(typeLabel(schema.items, root, depth + 1)) : 'any'}[]` : String(type)))
    .join(' | ');
}

function grouped(label: string): string {
  return label.includes(' | ') ? `(${label})` : label;
}

/** A call's failure, for a person: what went wrong, at which stage, and each validation issue. */
export function renderFailure(error: unknown, style: Style): string {
  if (!(error instanceof TwyltClientError)) return `${style.red('error')}: ${(error as Error)?.message ?? String(error)}\n`;
  const lines = [`${style.red(error.name)}: ${error.message}`];
  if (error instanceof ToolError) {
    for (const item of error.issues) {
      const value = 'value' in item ? style.dim(`  value: ${JSON.stringify(item.value)}`) : '';
      lines.push(`  • ${item.path}: ${item.message} ${style.dim(`(${item.code})`)}${value}`);
    }
    if (!error.error && error.stderr.trim()) lines.push('', error.stderr.trimEnd());
    if (error.error?.traceback) lines.push('', error.error.traceback.trimEnd());
  } else if (error instanceof SchemaMismatchError) {
    // Every issue, each saying what would be accepted (the message names only the first).
    for (const item of error.issues) lines.push(`  • ${item.path || '/'}: ${item.message}`);
  } else if (error.stderr.trim()) {
    lines.push(style.dim('stderr:'), error.stderr.trimEnd());
  }
  return `${lines.join('\n')}\n`;
}
