/** What the run loop needs to know about a tool, however it was declared (class or defineTool). */
import type { FewShot, Requirements } from '../protocol/spec.js';
import type { SchemaLike } from '../schema/types.js';

export type { FewShot, Requirements };

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
  fewShots?: readonly FewShot[];
}

export interface ToolDefinition extends ToolMetadata {
  inputSchema: SchemaLike;
  outputSchema: SchemaLike;
  biz(input: unknown): unknown;
}
