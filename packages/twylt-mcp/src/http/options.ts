/** What `serveHttp` takes and gives, and its defaults. */
import type { AddressInfo } from 'node:net';
import type { OAuthOptions } from 'twylt/server';
import type { CallLimiter } from 'twylt/toolset';
import type { EventLog } from '../log.js';
import type { ServingOptions } from '../serving.js';

export const MCP_PATH = '/mcp';
export const HEALTH_PATH = '/healthz';
// Defined in ../defaults.ts, which the help path loads without the MCP SDK.
export { DEFAULT_GRACE_MS, DEFAULT_MAX_BODY_BYTES } from '../defaults.js';

export interface HttpOptions extends ServingOptions {
  /** Address to bind (default 127.0.0.1). */
  host?: string;
  /** Port to bind; 0 picks a free one. */
  port: number;
  /** The bearer token every request to /mcp must carry; required beyond loopback, unless `oauth`. */
  token?: string;
  /** Be an OAuth 2.1 resource server of this issuer instead of taking one token (not with `token`). */
  oauth?: HttpOAuthOptions;
  /** Browser origins (`https://app.example.com`) allowed to call; others get 403. */
  allowOrigins?: readonly string[];
  /**
   * Host header values accepted (`NAME` or `NAME:PORT`). Default: the bound address and,
   * on loopback, the loopback names; with a token and no list, any Host (ADR 0013).
   */
  allowHosts?: readonly string[];
  /** Tool processes at once (default: the number of CPUs). */
  maxConcurrency?: number;
  /** Calls that may wait for a slot (default 100). */
  maxQueue?: number;
  /** Largest request body, in bytes (default 4 MiB). */
  maxBodyBytes?: number;
  /** Write each call's arguments into its log line (they may hold secrets: off by default). */
  logInput?: boolean;
  /** Where the structured log lines go (default: stderr, one JSON object per line). */
  events?: EventLog;
}

/**
 * `resource` defaults to the URL the bridge listens on (`http://HOST:PORT/mcp`), on loopback
 * only: beyond, the URL clients reach it at must be given.
 */
export interface HttpOAuthOptions extends Omit<OAuthOptions, 'resource' | 'offeredScopes'> {
  resource?: string;
  /** A tool needs the scope `tools:NAME` or `tools:*`: tools/list and tools/call per caller. */
  toolScopes?: boolean;
}

export interface HttpBridge {
  /** `http://HOST:PORT/mcp`. */
  url: string;
  address: AddressInfo;
  limiter: CallLimiter;
  /**
   * Stop accepting, let the requests in progress finish for up to `graceMs`, then abort
   * the rest (which kills their tools' process groups) and close every connection.
   */
  close(graceMs?: number): Promise<void>;
}
