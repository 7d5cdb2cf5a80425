// The floor of an MCP request over HTTP: a bare node:http server that answers every POST
// with the given tools/list result, written as the SDK's transport writes it (one event of
// an event stream), and nothing else: no checks, no SDK, no schemas. Against it,
// bench/http.mjs measures what twylt-mcp --http adds per request.
//
//   node bench/floors/mcp-list-server.mjs RESULT_JSON    prints "listening PORT" on stdout
import { createServer } from 'node:http';

const result = JSON.parse(process.argv[2]);
const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (message.id === undefined) {
      response.writeHead(202).end();
      return;
    }
    // initialize gets an initialize result; everything else the tools/list result.
    const answer = message.method === 'initialize'
      ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'floor', version: '0' } }
      : result;
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform' });
    response.end(`event: message\ndata: ${JSON.stringify({ result: answer, jsonrpc: '2.0', id: message.id })}\n\n`);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
