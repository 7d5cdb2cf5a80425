/**
 * The page's calls to its server. The token travels in the HttpOnly cookie the page's own
 * response set; the page never sees it. A call's input goes as JSON text written by
 * json.ts, so its numbers reach the tool exactly as typed.
 */
import type { ApiErrorBody, CallRecord, DescribeRequest, DescribeResponse, HistoryResponse, ToolsResponse, TransportName } from '../types.js';
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

async function request<T>(method: 'GET' | 'POST', path: string, body?: string, signal?: AbortSignal): Promise<T> {
  const response = await fetch(path, {
    method,
    body,
    signal,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    credentials: 'same-origin',
  });
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

/** `inputJson`: the input object as JSON text, sent as is. */
export function callTool(tool: string, inputJson: string, transport: TransportName, timeoutMs: number, signal: AbortSignal): Promise<CallRecord> {
  const body = `{"tool":${JSON.stringify(tool)},"transport":${JSON.stringify(transport)},"timeoutMs":${timeoutMs},"input":${inputJson}}`;
  return request<CallRecord>('POST', '/api/call', body, signal);
}

export function describeTool(tool: string, mode: DescribeMode): Promise<DescribeResponse> {
  return request<DescribeResponse>('POST', '/api/describe', JSON.stringify({ tool, mode } satisfies DescribeRequest));
}
