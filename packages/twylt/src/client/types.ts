/** What a TWYLT tool publishes through describe (docs/TWYLT.md section 5), as seen by a consumer. */
import type { DescribeMode } from '../protocol/constants.js';

import type { FewShot, JsonSchema, JsonSpec, Requirements } from '../protocol/spec.js';

export type { FewShot, JsonSchema, Requirements };

export interface SchemaPair {
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
}

/** The `json_spec` document (wire names, wire key order). */
export type ToolSpec = JsonSpec;

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
