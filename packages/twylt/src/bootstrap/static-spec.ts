/**
 * Describe answers built from statically read metadata, in the shapes of docs/TWYLT.md section 5.
 * A value of the wrong shape stays at its default, with a note.
 */
import { DEFAULTS, FORMAT_VERSION } from '../protocol/constants.js';
import { isRecord } from '../protocol/record.js';
import type { FewShot, Requirements } from '../tool/definition.js';
import { defaultRequirements } from '../requirements/default-requirements.js';
import type { StaticMetadata } from './extract.js';

/**
 * The requirements the tool itself would answer, or undefined when its source does not tell:
 * no tool was found, or it declares requirements in a form that was not read.
 */
export function staticRequirements(metadata: StaticMetadata, toolFile: string): Requirements | undefined {
  const declared = metadata.values.requirements;
  if (isRequirements(declared)) return { tool: declared.tool, format: declared.format, content: declared.content };
  if (declared !== undefined) metadata.notes.push(`${toolFile}: requirements is not an object of three strings {tool, format, content}`);
  if (!metadata.found || declared !== undefined || metadata.unreadable.has('requirements')) return undefined;
  metadata.notes.push(`${toolFile}: requirements not declared; derived from what its code imports`);
  return defaultRequirements(toolFile);
}

/** The json_spec of a tool that cannot be loaded: static metadata, `{}` for both schemas. */
export function staticJsonSpec(metadata: StaticMetadata, toolFile: string): Record<string, unknown> {
  return {
    format_version: FORMAT_VERSION,
    name: stringField(metadata, 'name', DEFAULTS.name, toolFile),
    version: stringField(metadata, 'version', DEFAULTS.version, toolFile),
    description: stringField(metadata, 'description', DEFAULTS.description, toolFile),
    requirements: staticRequirements(metadata, toolFile) ?? defaultRequirements(toolFile),
    inputSchema: {},
    outputSchema: {},
    few_shots: fewShots(metadata, toolFile),
  };
}

function stringField(metadata: StaticMetadata, field: 'name' | 'version' | 'description', fallback: string, toolFile: string): string {
  const value = metadata.values[field];
  if (value === undefined || typeof value === 'string') return value ?? fallback;
  metadata.notes.push(`${toolFile}: ${field} is not a string; the default is used`);
  return fallback;
}

function fewShots(metadata: StaticMetadata, toolFile: string): FewShot[] {
  const value = metadata.values.fewShots;
  if (value === undefined) return [];
  if (Array.isArray(value) && value.every(isRecord)) return value.map(({ input, output }) => ({ input, output }));
  metadata.notes.push(`${toolFile}: fewShots is not an array of {input, output} objects; the default [] is used`);
  return [];
}

function isRequirements(value: unknown): value is Requirements {
  return isRecord(value) && ['tool', 'format', 'content'].every((key) => typeof value[key] === 'string');
}
