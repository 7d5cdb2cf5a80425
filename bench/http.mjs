/**
 * `twylt-mcp --http` under concurrent clients, beside the same calls as direct process
 * spawns in the same run, so the server's own cost is a ratio. Loopback only; every round is
 * bounded in calls, and the whole run in time. See docs/performance.md.
 *
 *   npm run bench:http                         build, then the default rounds
 *   node bench/http.mjs --quick                fewer calls and rounds (noisier)
 *   node bench/http.mjs --clients 1,4,16 --calls 24 --rounds 12 --max-seconds 600
 *   node bench/http.mjs --json                 machine-readable results on stdout
 *
 * For each K in --clients: K MCP clients (the SDK's Streamable HTTP client, one connection
 * pool each) make --calls tools/call of the echo example together, as fast as each gets its
 * answers; then K workers spawn the echo tool directly, the same number of times (the floor:
 * spawn, parse stdout). The two alternate, round by round. Reported: calls per second of the
 * round and per-call latency (p50, p99) over all rounds, and http / direct. One server runs
 * the whole time, with --max-concurrency at the largest K, so it never queues below the floor.
 * The last rows time tools/list, which spawns nothing, against a bare node:http server
 * answering the same list (bench/floors/mcp-list-server.mjs): the server's cost per request.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BRIDGE, percentile, startBridge } from './lib/bridge.mjs';
import { directCall } from './lib/direct.mjs';
import { benchFlags, usageError } from './lib/flags.mjs';
import { median } from './lib/measure.mjs';

const ROOT = new URL('..', import.meta.url).pathname;
const USAGE = `usage: node bench/http.mjs [--quick] [--clients K,K,...] [--calls N] [--rounds R] [--max-seconds S] [--json]`;

const flags = benchFlags(USAGE, {
  clients: { type: 'string' },
  calls: { type: 'string' },
  rounds: { type: 'string' },
  'max-seconds': { type: 'string' },
});
const clientCounts = (flags.clients ?? (flags.quick ? '1,4' : '1,4,16')).split(',').map(Number);
const calls = Number(flags.calls ?? (flags.quick ? 16 : 24));
const rounds = Number(flags.rounds ?? (flags.quick ? 2 : 8));
const maxSeconds = Number(flags['max-seconds'] ?? 900);
const positive = (n) => Number.isInteger(n) && n > 0;
if (!clientCounts.every(positive) || !positive(calls) || !positive(rounds) || !positive(maxSeconds)) {
  usageError('--clients, --calls, --rounds and --max-seconds take positive whole numbers', USAGE);
}

const TOOL = [process.execPath, join(ROOT, 'build/examples/echo/tool.js')];
for (const file of [BRIDGE, TOOL[1]]) {
  if (!existsSync(file)) {
    process.stderr.write(`${file} is missing: run npm run build first\n`);
    process.exit(1);
  }
}
const INPUT = { text: 'hello' };
const deadline = Date.now() + maxSeconds * 1000;
const log = (text) => process.stderr.write(`${text}\n`);

/** bench/floors/mcp-list-server.mjs, answering with `listed`. */
async function startFloor(listed) {
  const child = spawn(process.execPath, [join(ROOT, 'bench/floors/mcp-list-server.mjs'), JSON.stringify(listed)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (chunk) => resolve(/listening (\d+)/.exec(String(chunk))?.[1]));
    child.on('exit', (code) => reject(new Error(`the floor server ended (exit ${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}

async function connect(url) {
  const client = new Client({ name: 'twylt-bench-http', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/**
 * `total` calls of `call` by `workers` workers at once, each starting its next call when its
 * last one is answered. Resolves with each call's latency and the round's wall time.
 */
async function round(workers, total, call) {
  let next = 0;
  const latencies = [];
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (next < total) {
        next++;
        const at = process.hrtime.bigint();
        await call(worker);
        latencies.push(Number(process.hrtime.bigint() - at) / 1e6);
      }
    }),
  );
  return { latencies, wallMs: Number(process.hrtime.bigint() - started) / 1e6 };
}


const echoCall = (client) => async () => {
  const result = await client.callTool({ name: 'echo', arguments: INPUT });
  if (result.isError || result.structuredContent?.text !== INPUT.text) throw new Error(`wrong answer: ${JSON.stringify(result)}`);
};
const spawnCall = async () => {
  const output = await directCall(TOOL, INPUT);
  if (output.text !== INPUT.text) throw new Error(`wrong output: ${JSON.stringify(output)}`);
};

const bridge = await startBridge(['--max-concurrency', String(Math.max(...clientCounts)), '--max-queue', '1000', '--', ...TOOL]);
const results = [];
let cutShort = false;
try {
  for (const k of clientCounts) {
    const clients = await Promise.all(Array.from({ length: k }, () => connect(bridge.url)));
    const paths = { http: (worker) => echoCall(clients[worker])(), direct: spawnCall };
    // Unmeasured: starts the page cache, the bridge's code paths and the connection pools.
    for (const call of Object.values(paths)) await round(k, k, call);
    const samples = { http: { latencies: [], rates: [] }, direct: { latencies: [], rates: [] } };
    for (let r = 0; r < rounds; r++) {
      if (Date.now() > deadline) {
        cutShort = true;
        break;
      }
      // Alternate which path goes first, so neither always meets the other's after-effects.
      for (const id of r % 2 === 0 ? ['http', 'direct'] : ['direct', 'http']) {
        const { latencies, wallMs } = await round(k, calls, paths[id]);
        samples[id].latencies.push(...latencies);
        samples[id].rates.push((calls / wallMs) * 1000);
      }
      log(`  ${k} client${k === 1 ? '' : 's'}: round ${r + 1}/${rounds}`);
    }
    await Promise.all(clients.map((client) => client.close()));
    if (samples.http.rates.length === 0) break;
    const summary = (id) => ({
      callsPerSecond: median(samples[id].rates),
      p50: percentile(samples[id].latencies, 50),
      p99: percentile(samples[id].latencies, 99),
      calls: samples[id].latencies.length,
    });
    const http = summary('http');
    const direct = summary('direct');
    results.push({ clients: k, http, direct, throughputRatio: http.callsPerSecond / direct.callsPerSecond, p50Ratio: http.p50 / direct.p50, p99Ratio: http.p99 / direct.p99 });
  }

  // tools/list spawns nothing: what a request costs the server itself (the checks, a fresh
  // SDK Server and transport, the JSON), beside a bare node:http server that answers the
  // same list and does nothing else. Four clients each, rounds alternated.
  if (Date.now() < deadline) {
    const k = 4;
    const probe = await connect(bridge.url);
    const listed = await probe.listTools();
    await probe.close();
    const floor = await startFloor(listed);
    try {
      const pools = { http: await Promise.all(Array.from({ length: k }, () => connect(bridge.url))), floor: await Promise.all(Array.from({ length: k }, () => connect(floor.url))) };
      const list = (id) => async (worker) => {
        const { tools } = await pools[id][worker].listTools();
        if (tools.length !== listed.tools.length) throw new Error(`wrong list from ${id}`);
      };
      const samples = { http: { latencies: [], rates: [] }, floor: { latencies: [], rates: [] } };
      for (const id of ['http', 'floor']) await round(k, 40, list(id));
      for (let r = 0; r < rounds && Date.now() < deadline; r++) {
        for (const id of r % 2 === 0 ? ['http', 'floor'] : ['floor', 'http']) {
          const { latencies, wallMs } = await round(k, calls * 10, list(id));
          samples[id].latencies.push(...latencies);
          samples[id].rates.push(((calls * 10) / wallMs) * 1000);
        }
      }
      await Promise.all([...pools.http, ...pools.floor].map((client) => client.close()));
      const summary = (id) => ({ callsPerSecond: median(samples[id].rates), p50: percentile(samples[id].latencies, 50), p99: percentile(samples[id].latencies, 99), calls: samples[id].latencies.length });
      if (samples.http.rates.length > 0) {
        const [http, bare] = [summary('http'), summary('floor')];
        results.push({ clients: k, list: { http, floor: bare, throughputRatio: http.callsPerSecond / bare.callsPerSecond, p50Ratio: http.p50 / bare.p50, p99Ratio: http.p99 / bare.p99 } });
      }
    } finally {
      await floor.stop();
    }
  }
} finally {
  await bridge.stop();
}

const machine = {
  cpu: `${cpus()[0]?.model ?? 'unknown'} x ${cpus().length}`,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  loadAverage1m: Number(loadavg()[0].toFixed(2)),
  os: `${platform()} ${release()}`,
  node: process.version,
};
const command = `node bench/http.mjs ${process.argv.slice(2).join(' ')}`.trim();
if (flags.json) {
  process.stdout.write(`${JSON.stringify({ machine, command, calls, rounds, cutShort, date: new Date().toISOString(), results }, null, 2)}\n`);
} else {
  const fix = (n, digits = 0) => n.toFixed(digits);
  const lines = [
    '| clients | path | calls/s | p50 ms | p99 ms | http / direct |',
    '|---:|---|---:|---:|---:|---|',
  ];
  for (const r of results) {
    if (r.list) {
      const { http, floor } = r.list;
      lines.push(`| ${r.clients} | tools/list, bare node:http server (floor) | ${fix(floor.callsPerSecond)} | ${fix(floor.p50, 1)} | ${fix(floor.p99, 1)} | |`);
      lines.push(
        `| ${r.clients} | tools/list over HTTP (no tool run) | ${fix(http.callsPerSecond)} | ${fix(http.p50, 1)} | ${fix(http.p99, 1)} | ` +
          `${fix(r.list.throughputRatio, 2)}x calls/s, ${fix(r.list.p50Ratio, 2)}x p50, ${fix(r.list.p99Ratio, 2)}x p99 |`,
      );
      continue;
    }
    lines.push(`| ${r.clients} | direct spawn (floor) | ${fix(r.direct.callsPerSecond, 1)} | ${fix(r.direct.p50)} | ${fix(r.direct.p99)} | |`);
    lines.push(
      `| ${r.clients} | tools/call over HTTP | ${fix(r.http.callsPerSecond, 1)} | ${fix(r.http.p50)} | ${fix(r.http.p99)} | ` +
        `${fix(r.throughputRatio, 2)}x calls/s, ${fix(r.p50Ratio, 2)}x p50, ${fix(r.p99Ratio, 2)}x p99 |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\n${machine.cpu}, ${machine.memoryGiB} GiB, load ${machine.loadAverage1m}, ${machine.os}, node ${machine.node}; ${command}; ${calls} calls x ${rounds} rounds per path and client count${cutShort ? ' (cut short by --max-seconds)' : ''}\n`);
}
