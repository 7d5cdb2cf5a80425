/** What a TWYLT tool publishes through describe (PROTOCOL.md section 5), as seen by a consumer. */
import type { DescribeMode } from '../protocol/constants.js';

export type JsonSchema = Record<string, unknown>;

export interface Requirements {
  tool: string;
  format: string;
  content: string;
}

export interface FewShot<I = unknown, O = unknown> {
  input: I;
  output: O;
}

export interface SchemaPair {
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
}

/** The `json_spec` document (wire names, wire key order). */
export interface ToolSpec {
  format_version: string;
  name: string;
  version: string;
  description: string;
  requirements: Requirements;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  few_shots: FewShot[];
}

/** What `describe(mode)` resolves to, per mode. */
export interface DescribeResults {
  brief: string;
  schema: SchemaPair;
  requirements: Requirements;
  few_shots: FewShot[];
  json_spec: ToolSpec;
}
export type DescribeResult<M extends DescribeMode> = DescribeResults[M];

export type Transport = 'cli' | 'stdin' | 'file';
export const TRANSPORTS: readonly Transport[] = ['cli', 'stdin', 'file'];
