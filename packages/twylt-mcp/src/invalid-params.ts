/**
 * Requests whose params the MCP SDK's Zod schemas refuse, answered as JSON-RPC says: -32602
 * Invalid params, in one sentence ("Invalid params: cursor: expected a string, got a
 * number"), never Zod's JSON dump of its issues.
 *
 * Two places refuse params, and both are covered here:
 * - The SDK's Protocol parses each request with its method's schema and, when that fails,
 *   sends the ZodError's message (the dump) under -32603, an internal error. Its only hook is
 *   setRequestHandler, which the bridge's Server overrides (server.ts) to wrap every schema
 *   with `readableParams`, the SDK's own (initialize, ping) included: the wrapped schema
 *   throws the -32602 error itself, and the Protocol sends a thrown error's code and message.
 *   Rewriting answers at the transport instead would mean parsing error messages.
 * - Before that, a transport checks each message against JSONRPCMessageSchema, whose params
 *   carry `_meta`: `invalidParamsAnswer` gives such a request -32602 too, not -32600, since
 *   the request itself is sound (stdio and --http alike).
 */
import { ErrorCode, JSONRPCRequestSchema, type JSONRPCErrorResponse, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { formatPath, jsonKind } from 'twylt/toolset';
import { z } from 'zod';

type ZodIssue = z.core.$ZodIssue;

/**
 * A JSON-RPC error as the SDK sends it (code, message, data). Not an McpError, whose message
 * starts with "MCP error CODE:", which the client would then prefix a second time.
 */
export function rpcError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, data });
}

/** -32602 with `message` after "Invalid params: ". */
export function invalidParams(message: string): Error {
  return rpcError(ErrorCode.InvalidParams, `Invalid params: ${message}`);
}

/**
 * `schema` (a request schema: method and params) with its params checked first, a failure
 * thrown as `invalidParams` with the issues in words. A schema of another shape is returned
 * as it is.
 */
export function readableParams<T>(schema: T): T {
  if (!(schema instanceof z.ZodObject)) return schema;
  const params = schema.shape.params;
  if (!(params instanceof z.ZodType)) return schema;
  const checked = z.preprocess((value) => {
    const result = params.safeParse(value);
    if (!result.success) throw invalidParams(describeIssues(result.error.issues, value));
    return value;
  }, params);
  return schema.extend({ params: checked }) as T;
}

/**
 * The -32602 answer to a message that is a JSON-RPC request in every respect but its params
 * (`"_meta": 5`, a progressToken that is an array); undefined for anything else.
 */
export function invalidParamsAnswer(message: unknown): (JSONRPCErrorResponse & { id: RequestId }) | undefined {
  const request = JSONRPCRequestSchema.safeParse(message);
  if (request.success || !request.error.issues.every((issue) => issue.path[0] === 'params')) return undefined;
  const { id, params } = message as { id: RequestId; params: unknown };
  const issues = request.error.issues.map((issue) => ({ ...issue, path: issue.path.slice(1) }));
  return { jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${describeIssues(issues, params)}` } };
}

/** `where: what was expected, got what`, for each issue, in one sentence. */
function describeIssues(issues: readonly ZodIssue[], params: unknown): string {
  return issues.map((issue) => `${issue.path.length === 0 ? 'params' : formatPath(issue.path.map(segment))}: ${expectation(issue, valueAt(params, issue.path))}`).join('; ');
}

function expectation(issue: ZodIssue, value: unknown): string {
  const got = `got ${jsonKind(value)}`;
  if (issue.code === 'invalid_type') return `expected ${typeName(issue.expected)}, ${got}`;
  if (issue.code === 'invalid_value') return `expected ${issue.values.map((option) => JSON.stringify(option)).join(' or ')}, ${got}`;
  if (issue.code === 'invalid_union') {
    // A union of plain types (a progressToken: a string or a number) fails with each branch's
    // type issue on the value itself; name those types.
    const branches = issue.errors.map((branch) => (branch.length === 1 && branch[0]!.code === 'invalid_type' && branch[0]!.path.length === 0 ? branch[0]!.expected : undefined));
    if (branches.length > 0 && branches.every((expected) => expected !== undefined)) return `expected ${[...new Set(branches)].map(typeName).join(' or ')}, ${got}`;
  }
  // Zod's own sentence ("Too small: expected string to have >=1 characters").
  return issue.message;
}

function typeName(type: string): string {
  const name = type === 'int' ? 'integer' : type;
  return `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name}`;
}

function segment(key: PropertyKey): string | number {
  return typeof key === 'number' ? key : String(key);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
