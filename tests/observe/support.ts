/**
 * What the observability tests run against: an OTLP/HTTP receiver (JSON decoded, protobuf
 * kept as bytes), the spans it got, a free port, and Debian's Prometheus.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PROMETHEUS = '/usr/bin/prometheus';
export const hasPrometheus = existsSync(PROMETHEUS);

export interface ExportRequest {
  path: string;
  contentType: string;
  body: Buffer;
}

/** A span as the tests read it: ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, unknown>;
  status: { code?: number };
  service: unknown;
}

export interface OtlpReceiver {
  endpoint: string;
  requests: ExportRequest[];
  /** Every span of the JSON exports so far. */
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: ExportRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ path: request.url ?? '', contentType: String(request.headers['content-type']), body: Buffer.concat(chunks) });
      const json = String(request.headers['content-type']).includes('json');
      response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
    });
  });
  const port = await listenFree(server);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    spans: () => requests.filter((r) => r.contentType.includes('json')).flatMap((r) => spansOf(JSON.parse(r.body.toString('utf8')))),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function spansOf(exported: any): ReceivedSpan[] {
  return (exported.resourceSpans ?? []).flatMap((resource: any) => {
    const service = attributesOf(resource.resource?.attributes)['service.name'];
    return (resource.scopeSpans ?? []).flatMap((scope: any) =>
      (scope.spans ?? []).map((span: any) => ({
        name: span.name,
        kind: span.kind,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        attributes: attributesOf(span.attributes),
        status: span.status ?? {},
        service,
      })),
    );
  });
}

function attributesOf(list: any[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((attribute) => [attribute.key, Object.values(attribute.value ?? {})[0]]));
}

/** Listen on 127.0.0.1, a port the OS picks. */
export function listenFree(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/** A port free a moment ago (for a program that takes its port as an argument). */
export async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listenFree(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The metrics URL a bridge printed on stderr. */
export function metricsUrl(stderr: string): string {
  const match = /twylt-mcp: metrics at (http:\/\/\S+)\n/.exec(stderr);
  if (!match) throw new Error(`no metrics line in:\n${stderr}`);
  return match[1]!;
}

export interface Prometheus {
  url: string;
  /** An instant query's result vector: labels and value. */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: number }>>;
  stop(): Promise<void>;
  log(): string;
}

/** Debian's Prometheus with `config` (prometheus.yml as text), its data in a temp folder. */
export async function startPrometheus(configText: string): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'twylt-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, configText);
  const port = await freePort();
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  const url = `http://127.0.0.1:${port}`;
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let ready = false;
  const deadline = Date.now() + 30_000;
  while (!ready) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`Prometheus did not start:\n${log}`);
    ready = await fetch(`${url}/-/ready`).then((response) => response.ok, () => false);
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    log: () => log,
    async query(promql) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await response.json()) as any;
      if (body.status !== 'success') throw new Error(`query ${promql}: ${JSON.stringify(body)}`);
      // A scalar or a vector; the tests read vectors.
      return body.data.resultType === 'vector' ? body.data.result.map((item: any) => ({ metric: item.metric, value: Number(item.value[1]) })) : [];
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await ended;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
