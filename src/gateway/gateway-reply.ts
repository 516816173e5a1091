// The gateways' own answers (as opposed to the node's, which pass through untouched): the same
// error body as the management API, so a client tells them apart from RLN's own errors
// (`{"error": "<text>", "code": <status>}`) by the shape of `error`.
import type { ServerResponse } from 'node:http';
import { AppError, ERROR_STATUS } from '../errors.ts';
import { closeAfterUnreadBody } from '../http-unread-body.ts';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/**
 * Answers an AppError; anything else is a bug and answers 500 without detail. When the node's
 * answer had already begun, nothing can be said any more: the connection is cut so the client
 * sees a truncated response, never a silently shortened one.
 */
export function sendGatewayError(res: ServerResponse, requestId: string, err: unknown, headers: Record<string, string> = {}) {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // Refused before the body was read to its end (413, 401, a node that failed mid-upload): the
  // connection closes after this answer, gently (http-unread-body.ts).
  if (res.req && closeAfterUnreadBody(res.req, res)) headers = { ...headers, connection: 'close' };
  const e = err instanceof AppError ? err : new AppError('internal_error', 'an internal error occurred; quote the requestId when reporting it');
  sendJson(
    res,
    ERROR_STATUS[e.code],
    { error: { code: e.code, message: e.message, requestId, ...(e.details ? { details: e.details } : {}) } },
    { 'x-request-id': requestId, ...headers },
  );
}
