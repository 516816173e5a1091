// What a failed call to a daemon means for whoever asked: undici's errors (and the socket's) turned
// into the service's error codes, as the forwarding path (forwarding/exchange.ts) names them too. A daemon that is not there or hangs up is 502 node_unreachable, one that stays silent past
// the timeout 504 node_timeout, one whose answer is not well-formed HTTP 502 node_error.
import { AppError } from '../errors.ts';

export interface RlnEndpoint {
  host: string;
  port: number;
  /**
   * The `Authorization` header the node is sent (`Bearer <biscuit>`, rln/node-bearer.ts); absent for a
   * node without a root key. Nothing else the service sends a node carries one: a client's own
   * Authorization is never forwarded (forward-headers.ts).
   */
  authorization?: string;
}

const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
// llhttp's refusals (HPE_*) and a body that ends short of its Content-Length.
const MALFORMED = (code: string) => code.startsWith('HPE_') || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH';

export function nodeFailure(err: unknown, endpoint: RlnEndpoint): AppError {
  if (err instanceof AppError) return err;
  const e = err as (Error & { code?: string; cause?: { code?: string } }) | undefined;
  const code = e?.code ?? '';
  if (TIMEOUTS.has(code) || e?.name === 'TimeoutError') return new AppError('node_timeout', 'the node did not answer in time');
  if (MALFORMED(code)) return new AppError('node_error', `the node's answer is malformed: ${e?.message ?? code}`);
  if (code === 'UND_ERR_INVALID_ARG') return new AppError('invalid_request', `the request cannot be sent to the node: ${e?.message}`);
  // undici's "other side closed" names no system error: say what happened rather than its own code.
  const reason = code === 'UND_ERR_SOCKET' ? (e?.cause?.code ?? 'connection closed') : code || 'connection failed';
  return new AppError('node_unreachable', `the node is not answering (${reason})`, { port: endpoint.port });
}

/** Said of an answer that goes past the response limit. */
export const answerTooLarge = (limit: number) => new AppError('node_error', `the node's answer is larger than ${limit} bytes`);

/** Said of a request body that goes past the request limit. */
export const requestTooLarge = (limit: number) =>
  new AppError('payload_too_large', `the request body is larger than ${limit} bytes (GATEWAY_MAX_REQUEST_BYTES)`);
