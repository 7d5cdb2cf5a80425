/**
 * What the inspector's server and its page say to each other (the JSON of /api/..., and
 * the link's fragment). The page imports it too, and must get no Node code from it.
 */
import type { DescribeMode } from '../protocol/constants.js';
import type { ErrorObject } from '../protocol/errors.js';
import type { Issue } from '../protocol/issues.js';
import type { JsonSpec } from '../protocol/spec.js';
import type { FailureKind } from '../toolset/failure-kinds.js';

/** The printed link carries the token as `/#token=...`: a fragment never reaches any server. */
export const TOKEN_FRAGMENT = 'token';

export type TransportName = 'cli' | 'stdin' | 'file';

/** One tool as the page lists it. */
export interface ToolInfo {
  name: string;
  spec: JsonSpec;
  /** The command line, as a reader would type it. */
  command: string;
  /** The entry's transport, else `cli`. */
  transport: TransportName;
  /** The entry's time-out, else the server's default. */
  timeoutMs: number;
  /** The entry's category ("pack/subfolder"), else the default group's name. */
  category: string;
}

/** GET /api/search?q=QUERY[&limit=N]: the tools that best fit QUERY, best first (twylt/search's ranking). */
export interface SearchResponse {
  tools: Array<{ name: string; score: number }>;
}

export interface ToolsResponse {
  tools: ToolInfo[];
  /**
   * The tools found or given but not served, each as one line saying which and why (a scan's
   * `failed` or `needs_install` tool, one that could not be described): the page lists them.
   */
  leftOut: string[];
}

/**
 * POST /api/call. The input is sent as JSON inside the body and read with exact numbers:
 * an integer beyond 2^53 typed in the page reaches the tool digit for digit.
 */
export interface CallRequest {
  tool: string;
  input: Record<string, unknown>;
  transport?: TransportName;
  timeoutMs?: number;
}

/** One failure of a client-side check of the output against the outputSchema. */
export interface OutputIssue {
  /** JSON Pointer into the output ('' is the whole output). */
  path: string;
  message: string;
}

/** A finished call: what the page shows and what the history keeps. */
export interface CallRecord {
  /** 1, 2, 3... in the order the calls started. */
  id: number;
  tool: string;
  /** The input as sent, JSON indented by 2, numbers exactly as typed. */
  input: string;
  transport: TransportName;
  timeoutMs: number;
  /** ISO time the call started. */
  startedAt: string;
  durationMs: number;
  /** Exit 0 with JSON output. */
  ok: boolean;
  /** The tool's exit code; null when it did not exit by itself (killed, never started). */
  exitCode: number | null;
  /** The failing stage, from the tool's error object or implied by its exit code. */
  stage?: string;
  /** On success: the result exactly as the tool wrote it, and indented by 2 (numbers kept). */
  output?: { text: string; pretty: string };
  /** On success, when the output breaks the tool's own outputSchema. */
  outputIssues?: OutputIssue[];
  stderr: string;
  error?: CallFailure;
}

export interface CallFailure {
  /** What went wrong, in the vocabulary every consumer and the metrics use (twylt/toolset's FailureKind). */
  kind: FailureKind;
  /** The client's error class: ToolError, TimeoutError, SpawnError, ToolCrashError... */
  name: string;
  message: string;
  /** The tool's normalized `{"error": ...}` object, when it printed one. */
  object?: ErrorObject;
  /** Its validation issues (paths such as `point.x`, `tags[0].label`). */
  issues: Issue[];
}

export interface HistoryResponse {
  calls: CallRecord[];
}

/** POST /api/describe. */
export interface DescribeRequest {
  tool: string;
  mode: DescribeMode;
}

export interface DescribeResponse {
  tool: string;
  mode: DescribeMode;
  /** `brief` as printed; the other modes as JSON indented by 2, numbers kept. */
  text: string;
}

/** The body of any refused or failed API request. */
export interface ApiErrorBody {
  error: string;
}
