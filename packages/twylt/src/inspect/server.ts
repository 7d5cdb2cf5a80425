/**
 * The `twylt inspect` web server: one page and a small JSON API over the tools it was
 * started with.
 *
 * Who gets in (twylt/server's checks, in front of every request): the Host must be one of
 * the server's own names (no DNS rebinding), an Origin must be the server's own (no other
 * site's pages), and every API request carries the per-run token as `Authorization: Bearer`.
 * The token comes in the printed link's fragment (`#token=`), which no browser sends to any
 * server; the page keeps it in its tab's sessionStorage, which is its own origin's (port
 * included), and sends it as that header. No cookie is set: cookies are not kept apart by
 * port, so every other server on the same host would receive it (ADR 0030). The page and
 * its two files hold no secret and need no token. A POST must also come from the page
 * itself (its Origin, or a Bearer token from a script) with a JSON body, so no form on
 * another site can start a tool.
 *
 * What runs: only the configured tools, named in the request, with the input as JSON in an
 * argument, on stdin or in input.json; never a command from a request, never a shell.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { TwyltClientError } from '../client/errors.js';
import { checkAccess, createToken, hostPort, hostsFor, originsFor, type AccessPolicy } from '../server/access.js';
import { BodyTooLargeError, readBody } from '../server/body.js';
import { listen } from '../server/listen.js';
import { categoryOf } from '../toolset/category.js';
import { showCommand } from '../toolset/entry.js';
import { ToolsetError, type DescribedTool } from '../toolset/describe.js';
import { CallLimiter, QueueFullError } from '../toolset/limiter.js';
import { HttpError, defaultTransport, parseCallRequest, parseDescribeRequest, runCall, runDescribe } from './calls.js';
import { CallHistory } from './history.js';
import { PAGE, loadAssets, refusalPage } from './page.js';
import { TOKEN_FRAGMENT, type SearchResponse, type ToolInfo, type ToolsResponse } from './types.js';
import type { ToolSearch } from '../toolset/search/index.js';

export interface InspectorOptions {
  tools: readonly DescribedTool[];
  /** Describe the tools again, for the page's Reload button; `signal` stops it, killing the tools. */
  reload: (signal: AbortSignal) => Promise<DescribedTool[]>;
  /** The tools left out now (see ToolsResponse.leftOut); asked at each listing. */
  leftOut?: () => readonly string[];
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Default: a new random token. */
  token?: string;
  /** Where refusals and server errors are reported (one line each). */
  log?: (line: string) => void;
}

export interface Inspector {
  /** The link to open: the page's address with its token in the fragment. */
  url: string;
  /** The address without the token. */
  origin: string;
  token: string;
  port: number;
  /** Stop listening and kill the tools of calls still running. */
  close(): Promise<void>;
}

/** A tool's input may be large (stdin takes any size); a request beyond this is refused (413). */
export const MAX_REQUEST_BYTES = 16 * 1024 * 1024;
/**
 * Tool processes at once, for calls, describes and reloads together (a reload counts once and
 * runs alone); more are refused (429) rather than queued behind a slow tool.
 */
export const MAX_RUNNING_CALLS = 16;


const HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // The page's address may still hold the token when its files load.
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
} as const;

export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const assets = await loadAssets();
  const token = options.token ?? createToken();
  const log = options.log ?? (() => {});
  const history = new CallHistory();
  const limiter = new CallLimiter({ maxConcurrent: MAX_RUNNING_CALLS, maxQueue: 0 });
  const running = new Set<AbortController>();
  let reloading = false;
  let tools = byName(options.tools);
  let access: { hosts: AccessPolicy['hosts']; origins: string[] } | undefined;

  /**
   * Run `work` in one of the limiter's slots (429 when none is free), with a signal that
   * aborts it, killing its tools, when the page goes away (Cancel, a closed tab) or the
   * server closes.
   */
  async function inSlot<T>(response: ServerResponse, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    response.on('close', () => {
      if (!response.writableFinished) controller.abort();
    });
    running.add(controller);
    try {
      return await limiter.run(() => work(controller.signal));
    } catch (error) {
      if (error instanceof QueueFullError) throw new HttpError(429, `${MAX_RUNNING_CALLS} tools are running already; wait for one to finish`);
      throw error;
    } finally {
      running.delete(controller);
    }
  }

  const toolInfo = (tool: DescribedTool): ToolInfo => ({
    name: tool.name,
    spec: tool.spec,
    command: showCommand(tool.runner.client.command),
    transport: defaultTransport(tool),
    // Resolved once, by the tool's policy: its entry's, the consumer's default, or TWYLT's.
    timeoutMs: tool.runner.policy.timeoutMs,
    category: categoryOf(tool.runner.entry),
  });

  /** The search index of the tools as described now (a reload makes a new map, and so a new index). */
  const indexes = new WeakMap<Map<string, DescribedTool>, Promise<ToolSearch>>();
  async function searchTools(query: string, limitText: string | null): Promise<SearchResponse> {
    const limit = limitText === null ? 10 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 20) throw new HttpError(400, `limit must be a whole number from 1 to 20, got ${JSON.stringify(limitText)}`);
    let index = indexes.get(tools);
    if (!index) {
      const described = [...tools.values()];
      // Loaded at the first search only: the page works without it.
      index = import('../toolset/search/index.js').then(({ ToolSearch, searchableTool }) => new ToolSearch(described.map((tool) => searchableTool(tool.name, tool.spec, categoryOf(tool.runner.entry)))));
      indexes.set(tools, index);
    }
    const { hits } = await (await index).search(query, { limit });
    return { tools: hits.map(({ tool, score }) => ({ name: tool.name, score })) };
  }

  const listing = (): ToolsResponse => ({ tools: [...tools.values()].map(toolInfo), leftOut: [...(options.leftOut?.() ?? [])] });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!access) return send(response, 503, 'text/plain', 'starting\n');
    const url = new URL(request.url ?? '/', 'http://inspect.invalid');
    const api = url.pathname.startsWith('/api/');
    const refusal = checkAccess(request, {
      hosts: access.hosts,
      // Bound to every interface, the server answers to any name, and its pages' origin is the one asked for.
      origins: access.hosts === 'any' ? [`http://${request.headers.host ?? ''}`.toLowerCase()] : access.origins,
      // The page and its files hold no secret; the API needs the token, in Authorization only.
      token: api ? token : undefined,
    });
    if (refusal) {
      log(`refused ${request.method} ${url.pathname}: ${refusal.reason}`);
      return api ? sendJson(response, refusal.status, { error: refusal.reason }) : send(response, refusal.status, 'text/html; charset=utf-8', refusalPage(refusal.reason));
    }
    if (request.method === 'POST') {
      const wrong = postRefusal(request);
      if (wrong) {
        log(`refused POST ${url.pathname}: ${wrong.reason}`);
        return sendJson(response, wrong.status, { error: wrong.reason });
      }
    }

    const route = `${request.method} ${url.pathname}`;
    switch (route) {
      case 'GET /':
        return send(response, 200, 'text/html; charset=utf-8', PAGE);
      case 'GET /ui/app.js':
      case 'GET /ui/app.css': {
        const asset = assets.get(url.pathname.slice('/ui/'.length))!;
        return send(response, 200, asset.type, asset.body);
      }
      case 'GET /api/tools':
        return sendJson(response, 200, listing());
      case 'GET /api/history':
        return sendJson(response, 200, { calls: history.list() });
      case 'GET /api/search':
        return sendJson(response, 200, await searchTools(url.searchParams.get('q') ?? '', url.searchParams.get('limit')));
      case 'POST /api/call': {
        const call = parseCallRequest(await readBody(request, MAX_REQUEST_BYTES), tools);
        const record = await inSlot(response, (signal) => runCall(history.nextId(), call, signal));
        history.add(record);
        return sendJson(response, 200, record);
      }
      case 'POST /api/describe': {
        const { tool, mode } = parseDescribeRequest(await readBody(request, MAX_REQUEST_BYTES), tools);
        try {
          return sendJson(response, 200, await inSlot(response, (signal) => runDescribe(tool, mode, signal)));
        } catch (error) {
          if (error instanceof TwyltClientError) throw new HttpError(502, `describe ${mode} failed: ${error.message}`);
          throw error;
        }
      }
      case 'POST /api/reload': {
        await readBody(request, MAX_REQUEST_BYTES);
        // A reload describes every tool at once: one at a time, so the bound stays the cap plus the tool count.
        if (reloading) throw new HttpError(429, 'the tools are being described again already; wait for that to finish');
        reloading = true;
        try {
          const before = tools;
          tools = byName(await inSlot(response, options.reload));
          // Fresh warm processes came with the new descriptions; the old ones are retired.
          for (const tool of before.values()) tool.runner.close();
        } catch (error) {
          if (error instanceof ToolsetError) throw new HttpError(502, `the tools could not be described again; the page keeps the earlier descriptions:\n${error.message}`);
          throw error;
        } finally {
          reloading = false;
        }
        return sendJson(response, 200, listing());
      }
    }
    const known = ['/', '/ui/app.js', '/ui/app.css', '/api/tools', '/api/history', '/api/search', '/api/call', '/api/describe', '/api/reload'];
    if (known.includes(url.pathname)) throw new HttpError(405, `${request.method} is not allowed on ${url.pathname}`);
    throw new HttpError(404, `nothing at ${url.pathname}`);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (error instanceof BodyTooLargeError) return sendJson(response, 413, { error: error.message });
      if (error instanceof HttpError) return sendJson(response, error.status, { error: error.message });
      log(`error in ${request.method} ${request.url?.split('?')[0]}: ${(error as Error)?.stack ?? String(error)}`);
      if (!response.headersSent) sendJson(response, 500, { error: `internal error: ${(error as Error)?.message ?? String(error)}` });
      else response.destroy();
    });
  });
  const address = await listen(server, options.host, options.port);
  const wildcard = options.host === '0.0.0.0' || options.host === '::';
  const names = hostsFor(options.host, address.port);
  access = { hosts: wildcard ? 'any' : names, origins: wildcard ? [] : originsFor(names) };
  const origin = `http://${hostPort(wildcard ? '127.0.0.1' : options.host, address.port)}`;

  return {
    url: `${origin}/#${TOKEN_FRAGMENT}=${token}`,
    origin,
    token,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const controller of running) controller.abort();
        for (const tool of tools.values()) tool.runner.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * A POST (which carries the token, as every API request does) must not come from another
 * site's page, and must carry JSON, which no HTML form can send.
 */
function postRefusal(request: IncomingMessage): { status: number; reason: string } | undefined {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return { status: 403, reason: `a POST from ${site} is not allowed` };
  if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '')) {
    return { status: 415, reason: 'the body must be JSON (Content-Type: application/json)' };
  }
  return undefined;
}

function byName(tools: readonly DescribedTool[]): Map<string, DescribedTool> {
  return new Map(tools.map((tool) => [tool.name, tool]));
}

function send(response: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void {
  response.writeHead(status, { ...HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body), ...extra });
  response.end(body);
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  send(response, status, 'application/json; charset=utf-8', JSON.stringify(value));
}
