/** The shapes a tool publishes through describe (docs/TWYLT.md section 5), wire names and key order. */

/** A JSON Schema document. */
export type JsonSchema = Record<string, unknown>;

/** What must be installed for the tool to run. */
export interface Requirements {
  tool: string;
  format: string;
  content: string;
}

/** One example of a call. */
export interface FewShot<In = unknown, Out = unknown> {
  input: In;
  output: Out;
}

/** The `json_spec` document. */
export interface JsonSpec {
  format_version: string;
  name: string;
  version: string;
  description: string;
  requirements: Requirements;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  few_shots: FewShot[];
}
