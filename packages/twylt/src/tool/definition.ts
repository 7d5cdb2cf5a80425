/** What the run loop needs to know about a tool, however it was declared (class or defineTool). */
import type { SchemaLike } from '../schema/types.js';

export interface Requirements {
  tool: string;
  format: string;
  content: string;
}

export interface FewShot<In = unknown, Out = unknown> {
  input: In;
  output: Out;
}

/** The metadata fields shared by `Tool` and `defineTool`. */
export interface ToolMetadata {
  name?: string;
  version?: string;
  description?: string;
  inputSchemaName?: string;
  inputSchemaVersion?: string;
  outputSchemaName?: string;
  outputSchemaVersion?: string;
  requirements?: Requirements;
  fewShots?: FewShot[];
}

export interface ToolDefinition extends ToolMetadata {
  inputSchema: SchemaLike;
  outputSchema: SchemaLike;
  biz(input: unknown): unknown;
}
