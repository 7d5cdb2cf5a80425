#!/usr/bin/env node
/** The `twylt-mcp` command. Exit codes: 1 when the bridge cannot start, 64 (USAGE_EXIT, as `twylt`) for a usage error. */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { isLoopback } from 'twylt/server';
import { commandLineArguments, USAGE_EXIT, UsageError } from 'twylt/toolset';
import { parseCli, USAGE, type AuthPlan, type CliPlan } from './args.js';
import type { HttpOAuthOptions } from './http/index.js';
import { stderrEventLog, stderrLog } from './log.js';

async function main(argv: readonly string[]): Promise<void> {
  let plan: CliPlan;
  try {
    plan = parseCli(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    stderrLog(`${error.message}\nRun "twylt-mcp --help" for usage.`);
    process.exitCode = USAGE_EXIT;
    return;
  }
  if (plan.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (plan.version) {
    const { version } = createRequire(import.meta.url)('../package.json') as { version: string };
    process.stdout.write(`twylt-mcp ${version}\n`);
    return;
  }

  // Loaded only now: help and usage errors need neither the MCP SDK nor Zod.
  const [{ ConfigError, CallLimiter, SandboxUnavailableError, assembleToolset, commandPath }, { StartupError }] = await Promise.all([import('twylt/toolset'), import('./tools.js')]);
  let token: string | undefined;
  let oauth: HttpOAuthOptions | undefined;
  try {
    if (plan.http?.auth) oauth = await oauthOptions(plan.http.auth);
    else if (plan.http) token = await readToken(plan.http.tokenFile);
  } catch (error) {
    stderrLog(`${(error as Error).message}\nRun "twylt-mcp --help" for usage.`);
    process.exitCode = USAGE_EXIT;
    return;
  }
  // Loaded only when asked for (ADR 0033): an unobserved bridge loads none of it.
  let observing: { close(): Promise<void> } | undefined;
  if (plan.metrics !== undefined || asksForTraces(process.env)) {
    const { ObserveSettingsError, startObserving } = await import('twylt/observe');
    try {
      const started = await startObserving({ serviceName: 'twylt-mcp', metrics: plan.metrics && { ...plan.metrics, token } });
      observing = started;
      if (started.metrics) stderrLog(`metrics at ${started.metrics.url}`);
      if (started.tracing) stderrLog('sending traces over OTLP');
    } catch (error) {
      stderrLog(`cannot start:\n${(error as Error).message}`);
      process.exitCode = error instanceof ObserveSettingsError ? USAGE_EXIT : 1;
      return;
    }
  }
  try {
    let leftOut = 0;
    // A refused host is the operator's to see: a line over stdio, an event of the HTTP bridge's JSON log.
    const { entries: configs, defaults, sandbox } = await assembleToolset(
      {
        configs: plan.configs,
        commands: plan.commands,
        scans: plan.scans,
        // One defaults object for every tool, handed on by reference.
        defaults: plan.defaults,
        sandbox: plan.sandbox,
        sandboxOptions: { log: plan.http ? (_line, refusal) => stderrEventLog('sandbox_refusal', { ...refusal }) : (line) => stderrLog(line) },
        // Each scanned tool runs in a workspace of its own, never in its code's folder.
        workspacesDir: plan.workspaces,
        envsDir: plan.envs,
        python: plan.python === undefined ? undefined : commandPath(plan.python),
      },
      (line) => {
        leftOut += 1;
        stderrLog(`--scan: ${line}`);
      },
    );
    const shared = { defaults, describeRetryMs: plan.describeRetryMs, strict: plan.strict, catalog: plan.catalog, searchEmbeddings: plan.searchEmbeddings, searchCatalogs: plan.configs.map((file) => resolve(file)) };
    if (configs.length === 0 && plan.scans.length > 0) {
      throw new StartupError(`no tools to serve: --scan ${plan.scans.join(', --scan ')} found ${leftOut} tool${leftOut === 1 ? '' : 's'} and left out every one${leftOut > 0 ? ' (the lines above say why)' : ''}`);
    }
    if (plan.http && !sandbox && !isLoopback(plan.http.host)) {
      stderrLog(`warning: serving tools over HTTP to callers beyond this machine (${plan.http.host}) without --sandbox: each runs with this user's files, network and rights (docs/sandbox.md)`);
    }
    if (plan.http) {
      const { serveHttp } = await import('./http/index.js');
      const { http } = plan;
      const bridge = await serveHttp(configs, { ...shared, ...http, token, oauth, maxConcurrency: plan.maxConcurrency, maxQueue: plan.maxQueue });
      onSignal(() => bridge.close(http.graceMs).finally(() => observing?.close()), () => bridge.close(0));
      stderrLog(`listening on ${bridge.url}`);
      return;
    }
    const [{ serveStdio }, { DEFAULT_MAX_QUEUE }] = await Promise.all([import('./stdio.js'), import('./server.js')]);
    const limiter = plan.maxConcurrency === undefined ? undefined : new CallLimiter({ maxConcurrent: plan.maxConcurrency, maxQueue: plan.maxQueue ?? DEFAULT_MAX_QUEUE });
    const server = await serveStdio(configs, { ...shared, limiter, maxMessageBytes: plan.maxMessageBytes });
    // The client gone: the spans still buffered are sent before the bridge ends.
    if (observing) {
      const closed = server.onclose;
      server.onclose = () => {
        closed?.();
        void observing.close();
      };
    }
    // Closing kills the tool processes of calls still running.
    onSignal(() => server.close());
  } catch (error) {
    await observing?.close();
    if (error instanceof SandboxUnavailableError) {
      stderrLog(`cannot start: ${(error as Error).message}`);
      process.exitCode = 1;
      return;
    }
    if (!(error instanceof ConfigError || error instanceof StartupError)) throw error;
    stderrLog(`cannot start:\n${error.message}`);
    process.exitCode = 1;
  }
}

/** Any of the OTEL_* variables that can turn traces on (twylt/observe decides). */
function asksForTraces(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OTEL_TRACES_EXPORTER || env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * On SIGINT or SIGTERM: `stop`, then end with 130 or 143 once nothing is left running. A
 * second signal calls `hurry` (HTTP: no more grace for the calls in progress).
 */
function onSignal(stop: () => Promise<unknown>, hurry?: () => Promise<unknown>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    process.exitCode = 128 + (signal === 'SIGINT' ? 2 : 15);
    if (stopping) {
      void hurry?.();
      return;
    }
    stopping = true;
    // The bridge then ends by itself once the tools are reaped; this is the backstop.
    void stop().finally(() => setTimeout(() => process.exit(), 2000).unref());
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

/** The OAuth options of HTTP mode: exclusive with TWYLT_MCP_TOKEN; the introspection client read from its file. */
async function oauthOptions(auth: AuthPlan): Promise<HttpOAuthOptions> {
  if (process.env.TWYLT_MCP_TOKEN !== undefined) throw new Error('give either TWYLT_MCP_TOKEN or --auth-issuer, not both');
  const { issuer, resource, scopes, introspection, clientFile, toolScopes, jwksCooldownMs, introspectJwtSeconds, dpopNonces } = auth;
  const options: HttpOAuthOptions = { issuer, resource, requiredScopes: scopes, toolScopes, jwksCooldownMs, introspectJwtSeconds, dpopNonces };
  if (introspection !== undefined && clientFile !== undefined) options.introspection = { url: introspection, ...(await readClient(clientFile)) };
  return options;
}

/** `{"client_id": "...", "client_secret": "..."}` from --auth-client-file. */
async function readClient(file: string): Promise<{ clientId: string; clientSecret: string }> {
  const { readFile } = await import('node:fs/promises');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read --auth-client-file ${file}: ${(error as Error).message}`);
  }
  let client: unknown;
  try {
    client = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text, which holds the secret.
    client = undefined;
  }
  const { client_id: clientId, client_secret: clientSecret } = (client ?? {}) as Record<string, unknown>;
  if (typeof clientId !== 'string' || typeof clientSecret !== 'string' || clientId === '' || clientSecret === '') {
    throw new Error(`--auth-client-file ${file} must hold {"client_id": "...", "client_secret": "..."}, two non-empty strings`);
  }
  return { clientId, clientSecret };
}

/** A token shorter than this is guessable; refuse it rather than pretend it protects. */
const MIN_TOKEN_CHARS = 16;

/** The bearer token of HTTP mode: from --token-file or TWYLT_MCP_TOKEN, not both. */
async function readToken(file: string | undefined): Promise<string | undefined> {
  const fromEnv = process.env.TWYLT_MCP_TOKEN;
  if (file !== undefined && fromEnv !== undefined) throw new Error('give the token either with --token-file or in TWYLT_MCP_TOKEN, not both');
  let token = fromEnv;
  if (file !== undefined) {
    const { readFile } = await import('node:fs/promises');
    try {
      token = (await readFile(file, 'utf8')).trim();
    } catch (error) {
      throw new Error(`cannot read --token-file ${file}: ${(error as Error).message}`);
    }
  }
  if (token === undefined) return undefined;
  if (token.length < MIN_TOKEN_CHARS || /\s/.test(token)) {
    throw new Error(
      `the token (${file === undefined ? 'TWYLT_MCP_TOKEN' : file}) must be at least ${MIN_TOKEN_CHARS} characters without spaces; ` +
        'make one with: node -e "console.log(require(\'crypto\').randomBytes(32).toString(\'base64url\'))"',
    );
  }
  return token;
}

// Options or `--` come first: under Bun, which drops a leading `--`, it is put back.
await main(commandLineArguments(true));
