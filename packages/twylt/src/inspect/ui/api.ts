/**
 * The page's calls to its server. The token travels as `Authorization: Bearer`, from this
 * tab's sessionStorage: its origin's own, port included, so no page of another server on the
 * same host can read it, and no cookie exists for the browser to send elsewhere (ADR 0030).
 * A call's input goes as JSON text written by json.ts, so its numbers reach the tool
 * exactly as typed.
 */
import type { ApiErrorBody, CallRecord, DescribeRequest, DescribeResponse, HistoryResponse, SearchResponse, ToolsResponse, TransportName } from '../types.js';
import type { DescribeMode } from '../../protocol/constants.js';

/** A refusal or failure of the server, with its message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'twylt-inspect-token';

/** Keep the link's token for this tab (it survives a reload, not a new tab). */
export function keepToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

async function request<T>(method: 'GET' | 'POST', path: string, body?: string, signal?: AbortSignal): Promise<T> {
  const response = await fetch(path, {
    method,
    body,
    signal,
    headers: { authorization: `Bearer ${sessionStorage.getItem(TOKEN_KEY) ?? ''}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    credentials: 'omit',
  });
  if (response.status === 401) {
    throw new ApiError(401, 'This page needs the link that twylt inspect printed on its terminal (it ends in #token=…); each run has a new one.');
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError(response.status, `the server answered ${response.status} with something that is not JSON`);
  }
  if (!response.ok) {
    const message = (parsed as Partial<ApiErrorBody>).error;
    throw new ApiError(response.status, typeof message === 'string' ? message : `the server answered ${response.status}`);
  }
  return parsed as T;
}

export const loadTools = () => request<ToolsResponse>('GET', '/api/tools');
export const reloadTools = () => request<ToolsResponse>('POST', '/api/reload', '{}');
export const loadHistory = () => request<HistoryResponse>('GET', '/api/history');
/** The tools that best fit `query`, ranked by the server as twylt-mcp's search mode ranks them. */
export const searchTools = (query: string, signal: AbortSignal) => request<SearchResponse>('GET', `/api/search?q=${encodeURIComponent(query)}`, undefined, signal);

/** `inputJson`: the input object as JSON text, sent as is. */
export function callTool(tool: string, inputJson: string, transport: TransportName, timeoutMs: number, signal: AbortSignal): Promise<CallRecord> {
  const body = `{"tool":${JSON.stringify(tool)},"transport":${JSON.stringify(transport)},"timeoutMs":${timeoutMs},"input":${inputJson}}`;
  return request<CallRecord>('POST', '/api/call', body, signal);
}

export function describeTool(tool: string, mode: DescribeMode): Promise<DescribeResponse> {
  return request<DescribeResponse>('POST', '/api/describe', JSON.stringify({ tool, mode } satisfies DescribeRequest));
}
