/**
 * What checking an OAuth access token costs `twylt-mcp --http`, beside the shared token, in
 * the same run: two bridges over the echo example, one with TWYLT_MCP_TOKEN, one with
 * --auth-issuer (a minimal issuer served here: its metadata and an RS256 key set), and
 * tools/list requests, which spawn nothing, so the difference is the server's own work
 * (the JWT's signature and claims, the scopes, the per-tool filter). Then the two
 * authenticators alone, in this process (twylt/server's tokenAuthenticator and
 * createResourceServer on the same request), alternating: the check without the HTTP
 * round trip, whose noise on a busy machine can hide it; and, alone too, the JWT check with
 * --auth-introspect-jwt: answers kept 30 s (a hash and a lookup per request) and 0 s (one
 * introspection request per check, to an endpoint served here). Loopback only; every round
 * is bounded in requests, the whole run in time.
 *
 *   node bench/oauth.mjs                        the default rounds
 *   node bench/oauth.mjs --quick                fewer requests and rounds (noisier)
 *   node bench/oauth.mjs --requests 400 --rounds 10 --json
 */
import { createServer } from 'node:http';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { createResourceServer, tokenAuthenticator } from '../packages/twylt/dist/server/index.js';
import { percentile, startBridge } from './lib/bridge.mjs';
import { benchFlags, usageError } from './lib/flags.mjs';

const USAGE = 'usage: node bench/oauth.mjs [--quick] [--requests N] [--rounds R] [--max-seconds S] [--json]';
const flags = benchFlags(USAGE, { requests: { type: 'string' }, rounds: { type: 'string' }, 'max-seconds': { type: 'string' } });
const requests = Number(flags.requests ?? (flags.quick ? 100 : 400));
const rounds = Number(flags.rounds ?? (flags.quick ? 4 : 10));
const deadline = Date.now() + Number(flags['max-seconds'] ?? 600) * 1000;
if (![requests, rounds].every((n) => Number.isInteger(n) && n > 0)) usageError('--requests and --rounds take positive whole numbers', USAGE);
const log = (text) => process.stderr.write(`${text}\n`);
const TOOL = [process.execPath, join(new URL('..', import.meta.url).pathname, 'build/examples/echo/tool.js')];

// The issuer: discovery and keys, nothing else (the bridge fetches both at start-up).
const { privateKey, publicKey } = await generateKeyPair('RS256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
const issuerServer = createServer((request, response) => {
  request.resume();
  const answers = { '/.well-known/openid-configuration': { issuer, jwks_uri: `${issuer}/jwks` }, '/jwks': { keys: [jwk] }, '/introspect': { active: true } };
  const answer = answers[request.url];
  response.writeHead(answer ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(answer ?? {}));
});
await new Promise((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${issuerServer.address().port}`;
const introspection = { url: `${issuer}/introspect`, clientId: 'bench', clientSecret: 'bench-secret' };

const sharedToken = 'bench-token-0123456789abcdef';
const shared = await startBridge(['--', ...TOOL], { TWYLT_MCP_TOKEN: sharedToken });
const oauth = await startBridge(['--auth-issuer', issuer, '--auth-scope', 'mcp', '--auth-tool-scopes', '--', ...TOOL]);
const accessToken = await new SignJWT({ scope: 'mcp tools:echo', client_id: 'bench' })
  .setProtectedHeader({ alg: 'RS256', kid: 'bench', typ: 'at+jwt' })
  .setIssuer(issuer)
  .setAudience(oauth.url)
  .setSubject('bench')
  .setIssuedAt()
  .setExpirationTime('1h')
  .sign(privateKey);

const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const list = (url, token) => async () => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: BODY,
  });
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"echo"')) throw new Error(`tools/list answered ${response.status}: ${text.slice(0, 200)}`);
};
const paths = { token: list(shared.url, sharedToken), oauth: list(oauth.url, accessToken) };

/** `count` requests one after another; each one's latency in ms. */
async function round(call, count) {
  const latencies = [];
  for (let i = 0; i < count && Date.now() < deadline; i++) {
    const at = process.hrtime.bigint();
    await call();
    latencies.push(Number(process.hrtime.bigint() - at) / 1e6);
  }
  return latencies;
}

const samples = { token: [], oauth: [] };
/** Per authenticate() call, in µs: the mean of each round of `requests * 10` calls. */
const inProcess = { token: [], oauth: [], introspectKept: [], introspectEach: [] };
try {
  for (const call of Object.values(paths)) await round(call, 50); // warm-up: connections, JIT, the first key import
  for (let r = 0; r < rounds && Date.now() < deadline; r++) {
    // Alternate which goes first, so neither always meets the other's after-effects.
    for (const id of r % 2 === 0 ? ['token', 'oauth'] : ['oauth', 'token']) samples[id].push(...(await round(paths[id], requests)));
    log(`round ${r + 1}/${rounds}`);
  }
  const authenticators = {
    token: tokenAuthenticator(sharedToken),
    oauth: await createResourceServer({ issuer, resource: oauth.url, requiredScopes: ['mcp'] }),
    introspectKept: await createResourceServer({ issuer, resource: oauth.url, requiredScopes: ['mcp'], introspection, introspectJwtSeconds: 30 }),
    introspectEach: await createResourceServer({ issuer, resource: oauth.url, requiredScopes: ['mcp'], introspection, introspectJwtSeconds: 0 }),
  };
  const requestWith = (token) => ({ headers: { authorization: `Bearer ${token}` } });
  const checks = { token: requestWith(sharedToken), oauth: requestWith(accessToken), introspectKept: requestWith(accessToken), introspectEach: requestWith(accessToken) };
  const order = ['token', 'oauth', 'introspectKept', 'introspectEach'];
  for (let r = 0; r < rounds + 1 && Date.now() < deadline; r++) {
    for (const id of r % 2 === 0 ? order : [...order].reverse()) {
      // A request to the issuer per check is a hundred times slower: fewer of them.
      const count = id === 'introspectEach' ? requests : requests * 10;
      const at = process.hrtime.bigint();
      for (let i = 0; i < count; i++) if ((await authenticators[id].authenticate(checks[id])).denial) throw new Error(`${id}: refused`);
      // The first round warms up.
      if (r > 0) inProcess[id].push(Number(process.hrtime.bigint() - at) / 1e3 / count);
    }
  }
} finally {
  await Promise.all([shared.stop(), oauth.stop()]);
  issuerServer.close();
}

const summary = (id) => ({ p50: percentile(samples[id], 50), p99: percentile(samples[id], 99), requests: samples[id].length });
const result = { token: summary('token'), oauth: summary('oauth') };
result.p50Ratio = result.oauth.p50 / result.token.p50;
result.p50ExtraMicroseconds = (result.oauth.p50 - result.token.p50) * 1000;
result.authenticate = { tokenMicroseconds: percentile(inProcess.token, 50), oauthMicroseconds: percentile(inProcess.oauth, 50) };
result.authenticate.ratio = result.authenticate.oauthMicroseconds / result.authenticate.tokenMicroseconds;
result.introspectJwt = { keptMicroseconds: percentile(inProcess.introspectKept, 50), eachMicroseconds: percentile(inProcess.introspectEach, 50) };
result.introspectJwt.keptRatio = result.introspectJwt.keptMicroseconds / result.authenticate.oauthMicroseconds;
result.introspectJwt.eachRatio = result.introspectJwt.eachMicroseconds / result.authenticate.oauthMicroseconds;
if (flags.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
else {
  const ms = (value) => `${value.toFixed(3)} ms`;
  process.stdout.write(`tools/list, one client, ${result.token.requests} requests each:\n`);
  process.stdout.write(`  shared token  p50 ${ms(result.token.p50)}  p99 ${ms(result.token.p99)}\n`);
  process.stdout.write(`  OAuth (JWT)   p50 ${ms(result.oauth.p50)}  p99 ${ms(result.oauth.p99)}\n`);
  process.stdout.write(`  OAuth / token at p50: ${result.p50Ratio.toFixed(3)}x (${result.p50ExtraMicroseconds.toFixed(0)} µs more per request)\n`);
  // A round cut short by --max-seconds leaves no sample: said, not a crash.
  const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a (out of time)');
  const { tokenMicroseconds, oauthMicroseconds, ratio } = result.authenticate;
  process.stdout.write(`authenticate() alone, median of round means: token ${fixed(tokenMicroseconds, 1)} µs, OAuth ${fixed(oauthMicroseconds, 1)} µs (${fixed(ratio, 1)}x)\n`);
  const { keptMicroseconds, eachMicroseconds, keptRatio, eachRatio } = result.introspectJwt;
  process.stdout.write(
    `--auth-introspect-jwt, beside the JWT alone: answers kept 30 s ${fixed(keptMicroseconds, 1)} µs (${fixed(keptRatio, 2)}x), ` +
      `asked each time ${fixed(eachMicroseconds, 1)} µs (${fixed(eachRatio, 1)}x)\n`,
  );
}
