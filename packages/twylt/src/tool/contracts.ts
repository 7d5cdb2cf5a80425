/**
 * The tool's contracts: its declared input and output schemas, adapted. A schema twylt
 * refuses is an error in the tool's definition, not in the request: describe and call
 * report it alike, naming the tool and the side, before any business code runs (ADR 0018).
 */
import { DEFAULTS } from '../protocol/constants.js';
import { Fault, TwyltError } from '../protocol/errors.js';
import { adaptSchema, SchemaError, type SchemaAdapter, type SchemaIo } from '../schema/index.js';
import type { ToolDefinition } from './definition.js';

export interface Contracts {
  input: SchemaAdapter;
  output: SchemaAdapter;
}

export async function contractsOf(tool: ToolDefinition): Promise<Contracts> {
  const [input, output] = await Promise.all([contractOf(tool, 'input'), contractOf(tool, 'output')]);
  return { input, output };
}

async function contractOf(tool: ToolDefinition, io: SchemaIo): Promise<SchemaAdapter> {
  try {
    return await adaptSchema(io === 'input' ? tool.inputSchema : tool.outputSchema, io);
  } catch (error) {
    throw error instanceof SchemaError ? refused(tool, io, error) : error;
  }
}

/** The one report of a refused schema, also for one that fails only when published. */
export function refused(tool: ToolDefinition, io: SchemaIo, error: SchemaError): TwyltError {
  const message = `Tool '${tool.name ?? DEFAULTS.name}': its ${io} schema is refused (an error in the tool's definition, not in the request): ${error.message}`;
  return new TwyltError('describe', { cause: new Fault('SchemaError', message) });
}
