/**
 * The MCP server: tools/list and tools/call over a set of described TWYLT tools.
 *
 * It uses the SDK's low-level `Server` on purpose. The high-level `McpServer` builds tool
 * schemas from Zod; here each tool's published JSON Schemas must reach the client exactly
 * as the tool wrote them.
 */
import { createRequire } from 'node:module';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AbortError } from 'twylt/client';
import { z } from 'zod';
import { failureKind, isRecord, jsonKind, QueueFullError, requestChannel, type CallLimiter, type RequestMessage } from 'twylt/toolset';
import { BROWSE_TOOLS, CALL_TOOL, LIST_TOOL, browseInstructions, listCatalog, readBrowseCall } from './catalog.js';
import type { CatalogMode } from './catalog-mode.js';
import { SEARCH_TOOL, SEARCH_TOOLS, searchInstructions, type CatalogSearch } from './search.js';
import { invalidParams, readableParams, rpcError } from './invalid-params.js';
import { DEFAULT_MAX_QUEUE } from './defaults.js';
import type { Log } from './log.js';
import { observingRequests, requestMessage, type Transport } from './observed.js';
import { outcomeOf, type CallRecord } from './outcome.js';
import { failureResult, successResult } from './result.js';
import type { BridgeTool } from './tools.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

/**
 * The JSON-RPC error code of a call that was not run because the bridge is too busy (every
 * slot taken, the queue full) or shutting down. Nothing ran, so a client may retry it.
 * In the range JSON-RPC leaves to implementations, apart from the codes the MCP SDK uses.
 */
export const BUSY_ERROR_CODE = -32010;

export { DEFAULT_MAX_QUEUE };

export interface ServerOptions {
  /**
   * Where unreadable MCP messages, and failed calls unless `onCall` takes them, are reported
   * (default: nowhere).
   */
  log?: Log;
  /** Bounds the tool processes running at once; calls beyond wait in its queue (default: no bound). */
  limiter?: CallLimiter;
  /** Told of every finished tools/call, once (a structured log, metrics), instead of `log`. */
  onCall?: (record: CallRecord) => void;
  /** Which tools this server's caller may see and call (default: all); the others do not exist for it. */
  mayCall?: (tool: string) => boolean;
  /** One MCP tool per TWYLT tool (`tools`, the default), or the two tools of browse mode (ADR 0025) or of search mode. */
  catalog?: CatalogMode;
  /** The searches of search mode (needed with `catalog: 'search'`). */
  search?: CatalogSearch;
  /** How requests arrive, for observers (ADR 0033; default stdio). */
  transport?: Transport;
}

/**
 * Without one, every SDK Server builds an Ajv instance of its own (about a millisecond), for
 * elicitation, which the bridge never uses. --http makes a Server per request: share one.
 */
let sharedValidator: AjvJsonSchemaValidator | undefined;

/**
 * `tools` is the set served, or a function that returns it as it is now (a set that grows
 * while the server runs, retry.ts): then every request sees the current set, and the server
 * declares `listChanged`, for its owner to send notifications/tools/list_changed.
 */
export function createServer(tools: readonly BridgeTool[] | (() => readonly BridgeTool[]), options: ServerOptions = {}): Server {
  const { log = () => {}, limiter, onCall, mayCall = () => true, catalog = 'tools' } = options;
  const logCall = onCall ? () => {} : log;
  const current = typeof tools === 'function' ? tools : () => tools;
  // A caller's tools: the others do not exist for it, in either mode. Worked out again only
  // when the set changed (a change makes a new array).
  let seen: readonly BridgeTool[] | undefined;
  let visible: readonly BridgeTool[] = [];
  let byName = new Map<string, BridgeTool>();
  const served = () => {
    const now = current();
    if (now !== seen) {
      seen = now;
      // The set itself when all is visible: browse mode's instructions are kept per set.
      visible = options.mayCall ? now.filter((tool) => mayCall(tool.definition.name)) : now;
      byName = new Map(visible.map((tool) => [tool.definition.name, tool]));
    }
    return { visible, byName };
  };
  const browse = catalog === 'browse';
  const searching = catalog === 'search';
  const { search } = options;
  if (searching && !search) throw new TypeError('catalog "search" needs options.search');
  const server = new BridgeServer(
    { name: 'twylt-mcp', version },
    {
      capabilities: { tools: typeof tools === 'function' ? { listChanged: true } : {} },
      jsonSchemaValidator: (sharedValidator ??= new AjvJsonSchemaValidator()),
      ...(browse ? { instructions: browseInstructions(served().visible) } : {}),
      ...(searching ? { instructions: searchInstructions(served().visible.length) } : {}),
    },
  );
  // Messages the SDK cannot handle (malformed JSON-RPC, say) are dropped; say so.
  server.onerror = (error) => log(`MCP: ${error.message}`);

  const transport = options.transport ?? { kind: 'stdio' };
  const listTools = () => ({ tools: browse ? BROWSE_TOOLS : searching ? SEARCH_TOOLS : served().visible.map((tool) => tool.definition) });
  server.setRequestHandler(ListToolsRequestSchema, (request, extra) => {
    if (!observingRequests()) return listTools();
    return requestChannel.tracePromise(async () => listTools(), requestMessage('tools/list', request.params, extra.requestId, extra.requestInfo?.headers, transport, undefined));
  });

  /** Run the served tool `name`: the one call path of both modes. */
  const callTool = async (name: string, args: Record<string, unknown>, extra: RequestExtra, arrived: number, observed?: RequestMessage): Promise<CallToolResult> => {
    let started: number | undefined;
    const record = (fields: Pick<CallRecord, 'outcome' | 'exitCode' | 'signal' | 'errorType' | 'stage'>) => {
      const now = performance.now();
      const trace = observed?.traceId === undefined ? {} : { traceId: observed.traceId, spanId: observed.spanId };
      onCall?.({ tool: name, ...fields, durationMs: now - arrived, queuedMs: (started ?? now) - arrived, input: args, ...trace });
    };
    const tool = served().byName.get(name);
    if (!tool) {
      if (observed) observed.errorType = String(ErrorCode.InvalidParams);
      record({ outcome: 'invalid_input', exitCode: null, errorType: 'UnknownTool' });
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    if (observed) observed.tool = name;
    const run = () => {
      started = performance.now();
      return tool.runner.call(args, { signal: extra.signal, numbers: 'text' });
    };
    try {
      const { output } = await (limiter ? limiter.run(run, extra.signal) : run());
      record({ outcome: 'ok', exitCode: 0 });
      return successResult(output);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // Aborted while still waiting for a slot: the limiter rejects with the signal's reason.
      const cancelled = error instanceof AbortError || extra.signal.aborted;
      record(cancelled ? { outcome: 'cancelled', exitCode: null, errorType: 'AbortError' } : outcomeOf(error));
      // A tool's failure by its kind; a refusal in JSON-RPC by its code (the MCP conventions).
      if (observed) observed.errorType = error instanceof QueueFullError ? String(BUSY_ERROR_CODE) : cancelled ? 'cancelled' : failureKind(error);
      if (error instanceof QueueFullError) {
        logCall(`call of "${name}" refused: ${message}`);
        throw rpcError(BUSY_ERROR_CODE, `twylt-mcp is busy: ${message}`, { maxConcurrency: error.maxConcurrent, maxQueue: error.maxQueue });
      }
      // A cancelled request gets no answer (the SDK drops it); there is nothing to report.
      if (!cancelled) logCall(`call of "${name}" failed: ${message}`);
      return failureResult(name, error);
    }
  };

  /** twylt_list (or twylt_search) and twylt_call; a refused request is an isError result the model can act on. */
  const finder = searching ? SEARCH_TOOL : LIST_TOOL;
  const browseTool = (name: string, args: Record<string, unknown>, extra: RequestExtra, arrived: number, observed?: RequestMessage): Promise<CallToolResult> | CallToolResult => {
    if (browse && name === LIST_TOOL) return listCatalog(served().visible, args);
    if (search && name === SEARCH_TOOL) {
      // One index per tool set, searched for this caller's tools only.
      const { byName } = served();
      return search.run(current(), args, options.mayCall ? (tool) => byName.has(tool) : undefined);
    }
    if (name !== CALL_TOOL) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}; this server offers ${finder} and ${CALL_TOOL}`);
    const call = readBrowseCall(args, served().byName, finder);
    if ('refused' in call) {
      if (observed) observed.errorType = 'invalid_input';
      onCall?.({ tool: typeof args.name === 'string' ? args.name : CALL_TOOL, outcome: 'invalid_input', exitCode: null, errorType: 'InvalidBrowseCall', durationMs: performance.now() - arrived, queuedMs: 0, input: args });
      return call.refused;
    }
    return callTool(call.name, call.arguments, extra, arrived, observed);
  };

  server.setRequestHandler(CallRequestSchema, (request, extra): Promise<CallToolResult> | CallToolResult => {
    const { name, arguments: args = {} } = request.params;
    const arrived = performance.now();
    const viaCatalog = browse || searching;
    if (!observingRequests()) return viaCatalog ? browseTool(name, args, extra, arrived) : callTool(name, args, extra, arrived);
    // Observed (ADR 0033): the tool is named only once the catalog is known to have it.
    const observed = requestMessage('tools/call', request.params, extra.requestId, extra.requestInfo?.headers, transport, undefined);
    return requestChannel.tracePromise(async () => (viaCatalog ? browseTool(name, args, extra, arrived, observed) : callTool(name, args, extra, arrived, observed)), observed);
  });

  return server;
}

/** What the SDK hands a request handler beside the request (its abort signal, among others). */
type RequestExtra = Parameters<Parameters<Server['setRequestHandler']>[1]>[1];

/**
 * tools/call as the SDK reads it, with its params checked first: params the SDK would refuse
 * with a raw Zod dump (as -32603, an internal error) get -32602 and a sentence instead.
 */
const CallRequestSchema = CallToolRequestSchema.extend({ params: z.preprocess(checkCallParams, CallToolRequestSchema.shape.params) });

function checkCallParams(params: unknown): unknown {
  if (!isRecord(params)) throw invalidParams('tools/call needs params {"name": TOOL, "arguments": {...}}');
  if (typeof params.name !== 'string') throw invalidParams(`"name" must be a string, the name of a tool from tools/list; got ${jsonKind(params.name)}`);
  if (params.arguments !== undefined && !isRecord(params.arguments)) {
    throw invalidParams(`"arguments" must be a JSON object, the tool's input; got ${jsonKind(params.arguments)}`);
  }
  return params;
}

/**
 * The SDK's Server, with the params of every request method checked by `readableParams`
 * (invalid-params.ts). setRequestHandler is also what the SDK's constructors call for the
 * methods they serve themselves (ping, initialize), so overriding it reaches those too.
 */
class BridgeServer extends Server {
  override setRequestHandler(...[schema, handler]: Parameters<Server['setRequestHandler']>): void {
    super.setRequestHandler(readableParams(schema), handler);
  }
}
