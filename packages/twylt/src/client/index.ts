/**
 * twylt/client: describe, call and inspect any TWYLT executable, in any language.
 *
 *   const tool = new TwyltClient(['python3', 'echo.py']);
 *   const spec = await tool.spec();
 *   const { output } = await tool.call({ text: 'hi' }, { timeoutMs: 5000 });
 */
export { MAX_ARGUMENT_BYTES, TwyltClient, createClient, parseErrorObject } from './client.js';
export { JsonNumber, hasJsonNumber, parseJson, stringifyExact, type NumberFidelity } from './json.js';
export type { CallOptions, CallResult, ClientOptions, DescribeOptions, InvokeOptions, WarmSource } from './client.js';
export { runProcess, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_MS } from './process.js';
export type { ProcessResult, RunOptions } from './process.js';
export { resolveCommand } from './command.js';
export { schemaValidator } from './schema-check.js';
export type { SchemaValidator } from './schema-check.js';
export {
  AbortError,
  InvalidOutputError,
  OutputTooLargeError,
  RESOURCE_LIMIT_NAMES,
  ResourceLimitError,
  SchemaMismatchError,
  SpawnError,
  TimeoutError,
  ToolCrashError,
  ToolError,
  TwyltClientError,
  UnexpectedExitError,
} from './errors.js';
export type { ProcessOutput, ResourceLimit, SchemaIssue } from './errors.js';
export { TRANSPORTS } from './types.js';
export type { DescribeResult, DescribeResults, FewShot, JsonSchema, Requirements, SchemaPair, ToolSpec, Transport } from './types.js';
