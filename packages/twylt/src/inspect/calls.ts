/**
 * The inspector's two actions on a tool, call and describe, from a request body to the
 * record the page shows. A request names a configured tool; there is no way to name a
 * command, so the page can run nothing but the tools the inspector was started with.
 */
import { JsonNumber } from '../client/json.js';
import { parseBoundedJson } from '../server/body.js';
import { schemaValidator } from '../client/schema-check.js';
import { ToolError, TwyltClientError, UnexpectedExitError } from '../client/errors.js';
import { TRANSPORTS } from '../client/types.js';
import { isDescribeMode, type DescribeMode } from '../protocol/constants.js';
import { formatJson } from '../protocol/render.js';
import type { DescribedTool } from '../toolset/describe.js';
import { failureKind } from '../toolset/failure.js';
import type { CallRecord, CallRequest, DescribeRequest, DescribeResponse, TransportName } from './types.js';

/** A request the server answers with a status other than 200. */
export class HttpError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
  }
}

/** The longest time-out a page may ask for: one day (setTimeout's limit is about 24.8 days). */
const MAX_TIMEOUT_MS = 86_400_000;

export interface ParsedCall {
  tool: DescribedTool;
  input: Record<string, unknown>;
  transport: TransportName;
  timeoutMs: number;
}

/**
 * A POST /api/call body. The input keeps the numbers exactly as typed (JsonNumber where a
 * JS number would change them), so JSON.stringify writes them to the tool unchanged.
 */
/** The entry's transport; else stdin for a tool with warm processes (only stdin calls use them), cli otherwise. */
export function defaultTransport(tool: DescribedTool): TransportName {
  return tool.runner.entry.transport ?? (tool.runner.warm ? 'stdin' : 'cli');
}

export function parseCallRequest(body: string, tools: ReadonlyMap<string, DescribedTool>): ParsedCall {
  const request = parseObject(body, ['tool', 'input', 'transport', 'timeoutMs'] satisfies (keyof CallRequest)[]);
  const tool = findTool(request.tool, tools);
  const input = request.input;
  if (typeof input !== 'object' || input === null || Array.isArray(input) || input instanceof JsonNumber) {
    throw new HttpError(400, '"input" must be a JSON object');
  }
  const transport = request.transport ?? defaultTransport(tool);
  if (!TRANSPORTS.includes(transport as TransportName)) throw new HttpError(400, `"transport" must be one of ${TRANSPORTS.join(', ')}`);
  // The page's own, else the tool's policy (its entry, the consumer's default, TWYLT's).
  const timeoutMs = request.timeoutMs ?? tool.runner.policy.timeoutMs;
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new HttpError(400, `"timeoutMs" must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  }
  return { tool, input: input as Record<string, unknown>, transport: transport as TransportName, timeoutMs };
}

/** A POST /api/describe body. */
export function parseDescribeRequest(body: string, tools: ReadonlyMap<string, DescribedTool>): { tool: DescribedTool; mode: DescribeMode } {
  const request = parseObject(body, ['tool', 'mode'] satisfies (keyof DescribeRequest)[]);
  const tool = findTool(request.tool, tools);
  if (!isDescribeMode(request.mode)) throw new HttpError(400, '"mode" must be one of brief, schema, requirements, few_shots, json_spec');
  return { tool, mode: request.mode };
}

function parseObject(body: string, fields: readonly string[]): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseBoundedJson(body);
  } catch (error) {
    throw new HttpError(400, `the request body is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof JsonNumber) {
    throw new HttpError(400, 'the request body must be a JSON object');
  }
  const unknown = Object.keys(value).filter((key) => !fields.includes(key));
  if (unknown.length > 0) {
    throw new HttpError(400, `unknown field ${JSON.stringify(unknown[0])}; the fields are ${fields.join(', ')} (a tool is named, never given as a command)`);
  }
  return value as Record<string, unknown>;
}

function findTool(name: unknown, tools: ReadonlyMap<string, DescribedTool>): DescribedTool {
  if (typeof name !== 'string') throw new HttpError(400, '"tool" must be the name of one of the listed tools');
  const tool = tools.get(name);
  if (!tool) throw new HttpError(404, `no tool is named ${JSON.stringify(name)}; the tools are ${[...tools.keys()].join(', ')}`);
  return tool;
}

/**
 * Run one call and describe what happened; never throws for a tool's failure. The tool gets
 * the input unchecked (its own validation is what the page is there to show); its output is
 * checked against its outputSchema afterwards, as a consumer would.
 */
export async function runCall(id: number, call: ParsedCall, signal: AbortSignal): Promise<CallRecord> {
  const startedAt = new Date();
  const started = performance.now();
  const record = {
    id,
    tool: call.tool.name,
    input: formatJson(call.input),
    transport: call.transport,
    timeoutMs: call.timeoutMs,
    startedAt: startedAt.toISOString(),
  };
  try {
    const result = await call.tool.runner.call(call.input, { transport: call.transport, timeoutMs: call.timeoutMs, numbers: 'text', validate: false, signal });
    const outputIssues = await checkOutput(call.tool, result.text);
    return {
      ...record,
      durationMs: Math.round(result.durationMs),
      ok: true,
      exitCode: 0,
      output: { text: result.text, pretty: formatJson(result.output) },
      ...(outputIssues.length > 0 ? { outputIssues } : {}),
      stderr: result.stderr,
    };
  } catch (error) {
    if (!(error instanceof TwyltClientError)) throw error;
    const failed = error instanceof ToolError ? error : undefined;
    return {
      ...record,
      durationMs: Math.round(performance.now() - started),
      ok: false,
      exitCode: error instanceof ToolError || error instanceof UnexpectedExitError ? error.exitCode : null,
      ...(failed?.stage ? { stage: failed.stage } : {}),
      stderr: error.stderr,
      error: {
        kind: failureKind(error),
        name: error.name,
        message: error.message,
        ...(failed?.error ? { object: failed.error } : {}),
        issues: failed?.issues ?? [],
      },
    };
  }
}

async function checkOutput(tool: DescribedTool, text: string): Promise<{ path: string; message: string }[]> {
  let check;
  try {
    check = await schemaValidator(tool.spec.outputSchema);
  } catch (error) {
    return [{ path: '', message: `the outputSchema cannot be checked: ${(error as Error).message}` }];
  }
  // The validator needs plain numbers; the exact ones are in the record's text.
  return check(JSON.parse(text)).map(({ path, message }) => ({ path, message }));
}

/** One describe mode, as the page shows it: `brief` as printed, the rest indented, numbers kept. */
export async function runDescribe(tool: DescribedTool, mode: DescribeMode, signal?: AbortSignal): Promise<DescribeResponse> {
  const client = tool.runner.client;
  const text = mode === 'brief' ? await client.describe('brief', { signal }) : formatJson(await client.describe(mode, { numbers: 'text', signal }));
  return { tool: tool.name, mode, text };
}
