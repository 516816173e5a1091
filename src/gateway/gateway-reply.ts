// The gateways' own answers (as opposed to the node's, which pass through untouched). An error the
// gateway makes itself has RLN's own error shape, `{"error": "<a sentence>", "code": <HTTP status>,
// "name": "<StableName>"}`, so a client written for RLN (or for the original hosted service, which
// shows errors with `new Error(body.error)`) reads it like any error of its node. The service's
// machine-readable code, the request id and any details sit under `rln_cloud`, a key RLN never
// uses, so they can never be mistaken for (or collide with) a field of RLN's.
import type { ServerResponse } from 'node:http';
import { AppError, ERROR_STATUS, type ErrorCode } from '../errors.ts';
import { closeAfterUnreadBody } from '../http/unread-body.ts';

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

/** RLN's `name` for a service error code: `node_not_running` is `NodeNotRunning`. */
export function rlnErrorName(code: ErrorCode): string {
  return code.replace(/(^|_)([a-z])/g, (_m, _sep: string, letter: string) => letter.toUpperCase());
}

/** The body of a gateway error, in RLN's shape. */
export function gatewayErrorBody(err: AppError, requestId: string) {
  return {
    error: err.message,
    code: ERROR_STATUS[err.code],
    name: rlnErrorName(err.code),
    rln_cloud: { code: err.code, requestId, ...(err.details ? { details: err.details } : {}) },
  };
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
  // connection closes after this answer, gently (http/unread-body.ts).
  if (res.req && closeAfterUnreadBody(res.req, res)) headers = { ...headers, connection: 'close' };
  const e = err instanceof AppError ? err : new AppError('internal_error', 'an internal error occurred; quote the requestId when reporting it');
  sendJson(res, ERROR_STATUS[e.code], gatewayErrorBody(e, requestId), { 'x-request-id': requestId, ...headers });
}
