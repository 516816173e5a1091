// Requests Node's HTTP parser refuses before any route sees them (an unencoded Unicode query
// string, a malformed request line or header) are answered with our error body, like every other
// bad request, instead of the framework's `{"error": "Bad Request", "message": "Client Error"}`.
// A timeout (408) and oversized headers (431) have no code of ours (errors.ts) and keep the
// framework's answers.
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { ERROR_STATUS } from '../errors.ts';

type ParserError = Error & { code?: string };

const KEPT: Record<string, { status: string; body: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: '408 Request Timeout', body: '{"error":"Request Timeout","message":"Client Timeout","statusCode":408}' },
  HPE_HEADER_OVERFLOW: {
    status: '431 Request Header Fields Too Large',
    body: '{"error":"Request Header Fields Too Large","message":"Exceeded maximum allowed HTTP header size","statusCode":431}',
  },
};

export function answerClientError(err: ParserError, socket: Socket) {
  // A connection reset: the socket is gone and nobody is there to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const kept = KEPT[err.code ?? ''];
  let head = kept?.status;
  let body = kept?.body;
  let extra = '';
  if (!kept) {
    const requestId = randomUUID();
    const message =
      err.code === 'HPE_INVALID_URL'
        ? 'the request line holds a character a URL may not; percent-encode the path and the query string as UTF-8'
        : `the request is not valid HTTP (${err.code ?? 'unparsable'})`;
    head = `${ERROR_STATUS.invalid_request} Bad Request`;
    body = JSON.stringify({ error: { code: 'invalid_request', message, requestId } });
    extra = `x-request-id: ${requestId}\r\nx-content-type-options: nosniff\r\n`;
  }
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${head}\r\ncontent-length: ${Buffer.byteLength(body!)}\r\ncontent-type: application/json; charset=utf-8\r\n${extra}connection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}
