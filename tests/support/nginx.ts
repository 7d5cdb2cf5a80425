/**
 * A real nginx (Debian's package) in front of `twylt-mcp --http` replicas, for the scale-out
 * tests: run as the current user with its own prefix, pid file, logs and temp folders in a
 * temp directory, listening on 127.0.0.1 only. The http-level configuration is the block
 * docs/mcp.md shows, with its addresses replaced by the test's (see docNginxConfig).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { blocksUnder, readDoc } from '../docs/markdown.js';

export const NGINX = '/usr/sbin/nginx';
export const HAS_NGINX = existsSync(NGINX);
export const NO_NGINX_REASON = `${NGINX} is missing (Debian: apt-get install nginx; .ci/run installs it as root)`;

/** The heading in docs/mcp.md whose nginx block the tests run. */
export const SCALE_OUT_HEADING = 'Running N replicas behind a load balancer';

/** A port free right now on 127.0.0.1 (nginx cannot listen on port 0 and tell us which it got). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface DocConfigOptions {
  /** The nginx port, on 127.0.0.1: replaces the doc's `listen 443 ssl;` and its TLS lines. */
  port: number;
  /** The replicas' `HOST:PORT`: replace the doc's `server 10.0.1.N:8080;` lines. */
  replicas: readonly string[];
  /** Drop the `hash ...;` line: round-robin, as without affinity. */
  roundRobin?: boolean;
}

/**
 * The nginx block of docs/mcp.md's scale-out section, as written but for what a test on one
 * machine must change: the listening address (plain HTTP on 127.0.0.1, so the TLS lines go)
 * and the replicas' addresses. Throws when the doc's block no longer has those lines, so a
 * change of the doc is seen here.
 */
export function docNginxConfig(options: DocConfigOptions): string {
  const blocks = blocksUnder(readDoc('docs/mcp.md'), SCALE_OUT_HEADING, 'nginx');
  if (blocks.length !== 1) throw new Error(`expected one nginx block under "${SCALE_OUT_HEADING}" in docs/mcp.md, found ${blocks.length}`);
  const lines = blocks[0]!.body.split('\n');
  const servers = lines.filter((line) => /^\s*server\s+\S+:\d+\s*;/.test(line));
  const listen = lines.filter((line) => /^\s*listen\s+443\s+ssl\s*;/.test(line));
  if (servers.length === 0 || listen.length !== 1) throw new Error('the doc block has no `server HOST:PORT;` lines or no `listen 443 ssl;`');
  const out: string[] = [];
  for (const line of lines) {
    if (line === servers[0]) out.push(...options.replicas.map((replica) => `    server ${replica};`));
    else if (servers.includes(line) || /^\s*ssl_certificate/.test(line)) continue;
    else if (listen.includes(line)) out.push(`    listen 127.0.0.1:${options.port};`);
    else if (options.roundRobin && /^\s*hash\s/.test(line)) continue;
    else out.push(line);
  }
  return out.join('\n');
}

export interface Nginx {
  /** `http://127.0.0.1:PORT`. */
  base: string;
  port: number;
  dir: string;
  child: ChildProcess;
  /** The access log so far: one `{status, upstream, upstreamStatus, requestTime}` per request. */
  access(): Array<{ status: number; upstream: string; upstreamStatus: string; requestTime: number; bodyBytes: number }>;
  errorLog(): string;
  /** SIGQUIT (graceful), then wait for the end; SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/**
 * Start nginx with `httpBlock` inside an `http {}` of its own (logs and temp folders in a temp
 * directory) and wait until it accepts connections on 127.0.0.1:`port`.
 */
export async function startNginx(httpBlock: string, port: number): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), 'twylt-nginx-'));
  for (const temp of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, temp));
  // As root, nginx would hand its workers to `nobody`, who cannot enter the temp directory.
  const user = process.getuid?.() === 0 ? `user ${userInfo().username};\n` : '';
  const config = `${user}worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 1024; }
http {
    log_format replicas '$status $upstream_addr $upstream_status $request_time $body_bytes_sent';
    access_log ${dir}/access.log replicas;
    client_body_temp_path ${dir}/client_body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
${httpBlock}
}
`;
  writeFileSync(join(dir, 'nginx.conf'), config);
  const child = spawn(NGINX, ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : '');
  const deadline = Date.now() + 15_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      const log = read('error.log');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx did not start on 127.0.0.1:${port}:\n${stderr}\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    dir,
    child,
    access: () =>
      read('access.log')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [status, upstream, upstreamStatus, requestTime, bodyBytes] = line.split(' ');
          return { status: Number(status), upstream: upstream!, upstreamStatus: upstreamStatus!, requestTime: Number(requestTime), bodyBytes: Number(bodyBytes) };
        }),
    errorLog: () => read('error.log'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Does something accept a TCP connection on 127.0.0.1:`port`? */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
