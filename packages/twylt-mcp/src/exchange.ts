/**
 * One POST of `twylt-mcp --http` in progress: its own SDK Server and transport, and the
 * requests it carries (one, or a JSON-RPC batch). Closing it aborts every call still running,
 * which kills their tools; cancelling one request stops that call only.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isJSONRPCErrorResponse, isJSONRPCResultResponse, type JSONRPCNotification, type RequestId } from '@modelcontextprotocol/sdk/types.js';

export interface Exchange {
  close(): void;
  /** `notifications/cancelled` for one of its requests, arrived in another POST. */
  cancel(requestId: unknown, reason?: unknown): void;
}

export function openExchange(server: Server, transport: StreamableHTTPServerTransport, requestIds: readonly unknown[]): Exchange {
  const key = (id: unknown) => JSON.stringify(id);
  /** Requests neither answered nor cancelled yet. */
  const open = new Set(requestIds.map(key));
  let cancelled = false;
  const close = () => {
    void transport.close();
    void server.close();
  };
  // The SDK ends a POST's answer once every request of it is answered, and a cancelled request
  // never is: once the others are, closing the exchange ends the answer.
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    await send(message, options);
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    open.delete(key(message.id));
    if (cancelled && open.size === 0) close();
  };
  return {
    close,
    cancel(requestId, reason) {
      if (!open.delete(key(requestId))) return;
      if (open.size === 0) return close();
      cancelled = true;
      // Handed to this exchange's own server, as if it had come with the batch: the SDK aborts
      // that request's handler (and so its tool) and sends no answer for it. (An id the SDK
      // refused, neither string nor number, has no handler: the cancel then does nothing.)
      const notification: JSONRPCNotification = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: requestId as RequestId, ...(typeof reason === 'string' ? { reason } : {}) } };
      transport.onmessage?.(notification);
    },
  };
}
