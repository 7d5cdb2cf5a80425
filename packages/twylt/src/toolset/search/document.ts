/**
 * What is searched of a tool: everything it says about itself, by field. The name and the
 * description say what it does; the category path and its pack where it sits; the names of
 * its input and output properties, their descriptions and enum values, and its few-shot
 * inputs say what it works on.
 */
import type { JsonSchema } from '../../protocol/spec.js';

/** A tool as a search sees it: what every consumer has of a described tool. */
export interface SearchableTool {
  name: string;
  description?: string;
  /** "pack/subfolder"; the pack is its first part. */
  category?: string;
  inputSchema?: JsonSchema;
  outputSchema?: JsonSchema;
  /** The inputs of its few-shot examples. */
  examples?: readonly unknown[];
}

export interface SearchDocument {
  fields: {
    name: string;
    description: string;
    category: string;
    /** Property names, input and output. */
    properties: string;
    /** Property titles, descriptions and enum values. */
    details: string;
    /** Few-shot inputs: their keys and the text of their values. */
    examples: string;
  };
}

/** How deep nested schemas are read; deeper properties rarely name what a tool does. */
const MAX_DEPTH = 4;
/** Bound the text taken from one tool's schemas and examples (a catalog may hold huge enums). */
const MAX_FIELD_CHARS = 4000;

export function searchDocument(tool: SearchableTool): SearchDocument {
  const names: string[] = [];
  const details: string[] = [];
  for (const schema of [tool.inputSchema, tool.outputSchema]) if (schema) readSchema(schema, names, details, 0);
  const examples: string[] = [];
  for (const input of tool.examples ?? []) readValue(input, examples, 0);
  return {
    fields: {
      name: tool.name,
      description: tool.description ?? '',
      category: tool.category ?? '',
      properties: bounded(names),
      details: bounded(details),
      examples: bounded(examples),
    },
  };
}

/** The text a model of meaning embeds for a tool: what it is called, does, and where it sits. */
export function embeddingText(tool: SearchableTool): string {
  const category = tool.category ? ` (${tool.category})` : '';
  return `${tool.name}${category}: ${tool.description ?? ''}`.slice(0, MAX_FIELD_CHARS);
}

function bounded(parts: string[]): string {
  const text = parts.join(' ');
  return text.length > MAX_FIELD_CHARS ? text.slice(0, MAX_FIELD_CHARS) : text;
}

function readSchema(schema: unknown, names: string[], details: string[], depth: number): void {
  if (depth > MAX_DEPTH || schema === null || typeof schema !== 'object') return;
  const node = schema as Record<string, unknown>;
  if (depth > 0) {
    if (typeof node.title === 'string') details.push(node.title);
    if (typeof node.description === 'string') details.push(node.description);
  }
  if (Array.isArray(node.enum)) for (const value of node.enum) if (typeof value === 'string') details.push(value);
  if (typeof node.const === 'string') details.push(node.const);
  const properties = node.properties;
  if (properties && typeof properties === 'object') {
    for (const [key, inner] of Object.entries(properties)) {
      names.push(key);
      readSchema(inner, names, details, depth + 1);
    }
  }
  for (const key of ['items', 'additionalProperties']) readSchema(node[key], names, details, depth + 1);
  for (const key of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(node[key])) for (const inner of node[key]) readSchema(inner, names, details, depth + 1);
}

function readValue(value: unknown, out: string[], depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (typeof value === 'string') out.push(value.slice(0, 200));
  else if (Array.isArray(value)) for (const item of value.slice(0, 10)) readValue(item, out, depth + 1);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      out.push(key);
      readValue(inner, out, depth + 1);
    }
  }
}
