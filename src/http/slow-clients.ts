// Slow clients (slow-loris): a request whose headers, or whose body, have not fully arrived within
// `server.request_timeout_ms` is answered 408 and its connection closed. Node enforces both bounds
// (`headersTimeout`, `requestTimeout`) but only checks them every `connectionsCheckingInterval`
// (30 s by default, so a 30 s bound could hold a socket for a minute): it is tied to the bound here.
// Only the request's arrival is timed: a handler that takes long to answer is not cut off.
import type { Socket } from 'node:net';
import type { ServerOptions } from 'node:http';
import type { HttpErrorCode } from '../../sdk/src/error-codes.ts';

/** How often Node looks for requests past their bound: a quarter of it, between 100 ms and 5 s. */
export const checkEveryMs = (timeoutMs: number) => Math.min(5000, Math.max(100, Math.floor(timeoutMs / 4)));

const REASONS: Record<string, [number, string, HttpErrorCode, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request_timeout', 'The request did not arrive in time (server.request_timeout_ms)'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request headers (with the URL) are too large'],
};
const BAD_REQUEST: [number, string, HttpErrorCode, string] = [400, 'Bad Request', 'bad_request', 'The request is not valid HTTP'];

/**
 * Answers what Node refuses before a route runs with the usual `{error: {code, message}}` body (codes of the catalogue,
 * sdk/src/error-codes.ts), then closes. The answer to a HEAD request has no body (a client would read one as the start
 * of a next answer): the method is the first word of what arrived, when it arrived.
 */
function clientErrorHandler(err: Error & { code?: string; rawPacket?: unknown }, socket: Socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, text, code, message] = REASONS[err.code ?? ''] ?? BAD_REQUEST;
  const body = JSON.stringify({ error: { code, message } });
  const head = Buffer.isBuffer(err.rawPacket) && err.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${text}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${head ? '' : body}`,
    );
  }
  socket.destroy();
}

export function slowClientOptions(timeoutMs: number): { requestTimeout: number; http: ServerOptions; clientErrorHandler: typeof clientErrorHandler } {
  return {
    requestTimeout: timeoutMs,
    http: { headersTimeout: timeoutMs, requestTimeout: timeoutMs, connectionsCheckingInterval: checkEveryMs(timeoutMs) },
    clientErrorHandler,
  };
}
