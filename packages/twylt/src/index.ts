export { Tool, defineTool, type DefinedTool, type ToolSpec } from './tool/tool.js';
export { runTool, type RunIo } from './tool/run.js';
export type { FewShot, Requirements, ToolMetadata } from './tool/definition.js';
export type { InferInput, InferOutput, SchemaLike } from './schema/types.js';
export type { JsonSchema, SchemaAdapter } from './schema/adapter.js';
export { TwyltError, type ErrorObject } from './protocol/errors.js';
export type { Issue } from './protocol/issues.js';
export { FORMAT_VERSION, DESCRIBE_MODES, EXIT, type DescribeMode } from './protocol/constants.js';
