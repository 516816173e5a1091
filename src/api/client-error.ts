// Requests Node's HTTP parser refuses before any route sees them (an unencoded Unicode query
// string, a malformed request line or header) are answered with our error body, like every other
// bad request, instead of the framework's `{"error": "Bad Request", "message": "Client Error"}`.
// A timeout (408) and oversized headers (431) have no code of ours (errors.ts) and keep the
// framework's answers. The answer is written by node:http on the bare socket, never by hand.
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { ERROR_STATUS } from '../errors.ts';

type ParserError = Error & { code?: string };

const KEPT: Record<string, { status: number; body: unknown }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, body: { error: 'Request Timeout', message: 'Client Timeout', statusCode: 408 } },
  HPE_HEADER_OVERFLOW: { status: 431, body: { error: 'Request Header Fields Too Large', message: 'Exceeded maximum allowed HTTP header size', statusCode: 431 } },
};

export function answerClientError(err: ParserError, socket: Socket) {
  // A connection reset: the socket is gone and nobody is there to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy(err);
    return;
  }
  const requestId = randomUUID();
  const kept = KEPT[err.code ?? ''];
  const message =
    err.code === 'HPE_INVALID_URL'
      ? 'the request line holds a character a URL may not; percent-encode the path and the query string as UTF-8'
      : `the request is not valid HTTP (${err.code ?? 'unparsable'})`;
  const status = kept?.status ?? ERROR_STATUS.invalid_request;
  const body = JSON.stringify(kept?.body ?? { error: { code: 'invalid_request', message, requestId } });
  const request = new IncomingMessage(socket);
  request.httpVersionMajor = 1;
  request.httpVersionMinor = 1;
  const response = new ServerResponse(request);
  response.shouldKeepAlive = false;
  response.assignSocket(socket);
  response.on('finish', () => socket.destroy());
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    'x-content-type-options': 'nosniff',
    connection: 'close',
  });
  response.end(body);
}
