/**
 * Serve a set of tools over MCP's Streamable HTTP transport, stateless: every POST stands
 * alone (a fresh SDK Server and transport over the tools served at that moment: those
 * described at start-up, and any left out then that a retry described since, retry.ts),
 * so any replica behind a load balancer can answer any request. ADR 0013 has the reasons.
 *
 * In front of the SDK, on every request, the gates (gates.ts): the Host and Origin checks of
 * twylt/server, the credential (a shared token, or an OAuth access token: one Authenticator
 * either way), a bounded body, and our own JSON parse that keeps a caller's numbers exact.
 * Behind it: one CallLimiter bounds the tool processes of all requests together. This module
 * starts, listens and stops.
 */
import { createServer as createHttpServer, type Server as NodeHttpServer } from 'node:http';
import { Server as NetServer, type AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import {
  ALL_TOOLS_SCOPE,
  DEFAULT_HOST,
  RESOURCE_METADATA_PATH,
  anyone,
  assertSafeBind,
  createResourceServer,
  hostPort,
  hostsFor,
  isLoopback,
  listen,
  normalizeOrigin,
  resourceMetadataPaths,
  tokenAuthenticator,
  toolScope,
  type AccessPolicy,
} from 'twylt/server';
import { CallLimiter, type ToolEntry } from 'twylt/toolset';
import { stderrEventLog, type EventLog } from '../log.js';
import type { ServedTools } from '../retry.js';
import { DEFAULT_MAX_QUEUE } from '../server.js';
import { startServing } from '../serving.js';
import { StartupError } from '../tools.js';
import { Drainer } from './drain.js';
import type { Gateway } from './gates.js';
import { handle } from './handle.js';
import { SERVER_ERROR, sendError } from './json-rpc.js';
import { pathOf } from './log-fields.js';
import { DEFAULT_GRACE_MS, DEFAULT_MAX_BODY_BYTES, MCP_PATH, type HttpBridge, type HttpOptions } from './options.js';

export { DEFAULT_GRACE_MS, DEFAULT_MAX_BODY_BYTES, HEALTH_PATH, MCP_PATH, type HttpBridge, type HttpOAuthOptions, type HttpOptions } from './options.js';

/**
 * Check the binding, describe every tool (rejecting with a StartupError when one cannot be
 * served), then listen. Nothing is spawned before the binding is known to be safe, and
 * nothing is answered before the gateway is complete (OAuth's set-up needs the bound port).
 */
export async function serveHttp(entries: readonly ToolEntry[], options: HttpOptions): Promise<HttpBridge> {
  const host = options.host ?? DEFAULT_HOST;
  checkStartup(host, options);
  const allowOrigins = (options.allowOrigins ?? []).map(normalizeOrigin);
  const events = options.events ?? stderrEventLog;
  const { served, search, retry } = await startServing(entries, options);
  const limiter = new CallLimiter({ maxConcurrent: options.maxConcurrency ?? availableParallelism(), maxQueue: options.maxQueue ?? DEFAULT_MAX_QUEUE });
  const drainer = new Drainer();

  let opened!: (gateway: Gateway) => void;
  const ready = new Promise<Gateway>((resolve) => (opened = resolve));
  const http: NodeHttpServer = createHttpServer((request, response) => {
    ready
      .then((gateway) => handle(gateway, request, response))
      .catch((error: unknown) => {
        events('error', { message: (error as Error).message, method: request.method, path: pathOf(request) });
        if (!response.headersSent) sendError(response, 500, SERVER_ERROR, 'internal error');
        else response.destroy();
      });
  });
  drainer.watch(http);
  let address: AddressInfo;
  try {
    address = await listen(http, host, options.port);
  } catch (error) {
    throw new StartupError(`cannot listen on ${hostPort(host, options.port)}: ${(error as Error).message}`);
  }
  let authentication: Pick<Gateway, 'authenticator' | 'resourceServer' | 'metadataPaths'>;
  try {
    authentication = await authenticationOf(options, served, `http://${hostPort(host, address.port)}${MCP_PATH}`);
  } catch (error) {
    http.close();
    http.closeAllConnections();
    throw error;
  }
  const policy: AccessPolicy = {
    hosts: hostsAllowed(host, address.port, options.allowHosts ?? [], options.token !== undefined || options.oauth !== undefined),
    origins: allowOrigins,
  };
  opened({
    served,
    search,
    limiter,
    catalog: options.catalog,
    events,
    logInput: options.logInput ?? false,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    policy,
    corsOrigins: new Set(policy.origins),
    ...authentication,
    toolScopes: options.oauth?.toolScopes ?? false,
    drainer,
    used: new WeakSet(),
    cancellable: new Map(),
    isServed: servedNames(served),
  });
  const retries = retry();

  const stopTools = () => {
    retries.stop();
    for (const tool of served.current) tool.runner.close();
  };
  const close = closer({ http, drainer, limiter, events, stopTools });

  return { url: `http://${hostPort(host, address.port)}${MCP_PATH}`, address, limiter, close };
}

/**
 * The bridge's `close`: stop accepting, let the exchanges in progress finish for up to
 * `graceMs` (the drain ends with the last of them), then abort the rest and close every
 * connection. Asked again while draining with 0 (a second Ctrl-C): no more grace.
 */
function closer({ http, drainer, limiter, events, stopTools }: { http: NodeHttpServer; drainer: Drainer; limiter: CallLimiter; events: EventLog; stopTools: () => void }): HttpBridge['close'] {
  let closing: Promise<void> | undefined;
  let endGrace: (() => void) | undefined;
  return (graceMs = DEFAULT_GRACE_MS) => {
    if (closing) {
      if (graceMs === 0) endGrace?.();
      return closing;
    }
    closing = (async () => {
      drainer.start();
      stopTools();
      events('draining', { running: limiter.running, queued: limiter.queued, graceMs });
      // net's close, not http's: http's also destroys every idle connection, and a connection
      // accepted whose request is not read yet counts as idle; its request, already sent, would
      // meet a reset (nginx answers 502 and does not resend a POST). The drain waits for such a
      // connection's request too (Drainer.watch). Kept connections left idle end at Node's
      // keep-alive time-out, or with a 503 to their next request.
      const stopped = new Promise<void>((resolve) => NetServer.prototype.close.call(http, () => resolve()));
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<boolean>((resolve) => {
        endGrace = () => resolve(false);
        timer = setTimeout(endGrace, graceMs);
      });
      const finished = await Promise.race([drainer.idle().then(() => true), graceOver]);
      clearTimeout(timer);
      if (!finished) {
        events('grace_over', { running: limiter.running, queued: limiter.queued });
        drainer.closeAll();
        // Aborted calls end once their processes are reaped.
        await Promise.race([limiter.idle(), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
      }
      http.closeAllConnections();
      await stopped;
      events('stopped');
    })();
    return closing;
  };
}

/** The refusals to start that need no tool described: credentials given twice, OAuth without its URL, an open bind. */
function checkStartup(host: string, { oauth, token }: HttpOptions): void {
  if (oauth && token !== undefined) throw new StartupError('give either a token or OAuth (--auth-issuer), not both');
  if (oauth && oauth.resource === undefined && !isLoopback(host)) {
    throw new StartupError(`give --auth-resource URL, the URL clients reach this server at (every token's audience), when listening on ${host}`);
  }
  try {
    assertSafeBind(host, token !== undefined || oauth !== undefined, 'set TWYLT_MCP_TOKEN or give --token-file FILE (or use OAuth: --auth-issuer URL)');
  } catch (error) {
    throw new StartupError((error as Error).message);
  }
}

/** Who may call: anyone, the holders of the shared token, or (OAuth) the bearers of the issuer's tokens, `resource` their audience by default. */
async function authenticationOf({ oauth, token }: HttpOptions, served: ServedTools, resource: string): Promise<Pick<Gateway, 'authenticator' | 'resourceServer' | 'metadataPaths'>> {
  if (!oauth) return { authenticator: token === undefined ? anyone : tokenAuthenticator(token), metadataPaths: [] };
  let resourceServer;
  try {
    // The tools' scopes are offered as the tools are served now (a retry may add one later).
    const offeredScopes = oauth.toolScopes ? () => toolScopes(served.current.map((tool) => tool.definition.name)) : undefined;
    resourceServer = await createResourceServer({ ...oauth, resource: oauth.resource ?? resource, offeredScopes });
  } catch (error) {
    throw new StartupError(`OAuth: ${(error as Error).message}`);
  }
  const metadataPaths = [...new Set([...resourceMetadataPaths(resourceServer.resource), `${RESOURCE_METADATA_PATH}${MCP_PATH}`])];
  return { authenticator: resourceServer, resourceServer, metadataPaths };
}

/** Whether a tool of this name is served; the set of names made again only when the tools change. */
function servedNames(served: ServedTools): (name: string) => boolean {
  let names: { of: readonly unknown[]; set: ReadonlySet<string> } | undefined;
  return (name) => {
    if (names?.of !== served.current) names = { of: served.current, set: new Set(served.current.map((tool) => tool.definition.name)) };
    return names.set.has(name);
  };
}

/**
 * Accepted Host values. A list given: those names (a NAME without a port also as itself, the
 * way a client writes the Host of a default port behind a proxy). Else with a token: any, since
 * a rebinding page cannot send the token. Else: this server's own names.
 */
function hostsAllowed(host: string, port: number, extra: readonly string[], hasToken: boolean): string[] | 'any' {
  if (extra.length === 0 && hasToken) return 'any';
  const bare = extra.filter((name) => !/:\d+$/.test(name) || name.endsWith(']')).map((name) => name.toLowerCase());
  return [...new Set([...hostsFor(host, port, extra), ...bare])];
}

/** The scopes of per-tool access: `tools:*`, then one per tool whose name can be a scope. */
function toolScopes(names: readonly string[]): string[] {
  return [ALL_TOOLS_SCOPE, ...names.flatMap((name) => toolScope(name) ?? [])];
}
