/**
 * Every metric, label and span attribute name the observe layer emits, in one place: the
 * names are an interface (dashboards, alerts and trace queries depend on them, and
 * docs/observability.md lists them), so each is written once.
 */

/** Prometheus metric names. */
export const METRIC = {
  operationDuration: 'mcp_server_operation_duration_seconds',
  calls: 'twylt_tool_calls_total',
  callDuration: 'twylt_tool_call_duration_seconds',
  inFlight: 'twylt_tool_calls_in_flight',
  queueWaiting: 'twylt_queue_waiting',
  queueWait: 'twylt_queue_wait_seconds',
  queueRefusals: 'twylt_queue_refusals_total',
  timeouts: 'twylt_tool_timeouts_total',
  cancellations: 'twylt_tool_cancellations_total',
  warmTakes: 'twylt_warm_takes_total',
  exits: 'twylt_tool_exits_total',
  processDuration: 'twylt_tool_process_duration_seconds',
  startup: 'twylt_tool_startup_seconds',
  sandboxRefusals: 'twylt_sandbox_refusals_total',
  httpRefusals: 'twylt_http_refusals_total',
  searchDuration: 'twylt_search_duration_seconds',
  searchResults: 'twylt_search_results',
  searchFallbacks: 'twylt_search_fallbacks_total',
} as const;

/** Prometheus label names. */
export const LABEL = {
  method: 'mcp_method_name',
  tool: 'gen_ai_tool_name',
  errorType: 'error_type',
  result: 'result',
  exitCode: 'exit_code',
  start: 'start',
  reason: 'reason',
  status: 'status',
  ranking: 'ranking',
} as const;

/** Span attribute names (the OpenTelemetry MCP and GenAI conventions, and twylt's own). */
export const ATTRIBUTE = {
  serviceName: 'service.name',
  method: 'mcp.method.name',
  toolName: 'gen_ai.tool.name',
  operationName: 'gen_ai.operation.name',
  requestId: 'jsonrpc.request.id',
  sessionId: 'mcp.session.id',
  protocolVersion: 'mcp.protocol.version',
  networkTransport: 'network.transport',
  networkProtocol: 'network.protocol.name',
  clientAddress: 'client.address',
  clientPort: 'client.port',
  errorType: 'error.type',
  statusCode: 'rpc.response.status_code',
  processPid: 'process.pid',
  processExitCode: 'process.exit.code',
  processSignal: 'twylt.process.signal',
  processStart: 'twylt.process.start',
  queueWaiting: 'twylt.queue.waiting',
  queueRunning: 'twylt.queue.running',
  warmHit: 'twylt.warm.hit',
  searchRanking: 'twylt.search.ranking',
  searchResults: 'twylt.search.results',
  searchFallback: 'twylt.search.fallback',
} as const;
