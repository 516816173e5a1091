// What both gateways do once they know the caller may use the node: ask nodes/ what the node's path
// means (nodes/paths/node-paths.ts: the status document, the unlock, the confined backup paths, the calls
// recorded), then write its answer or forward the request as it came. Reading the body and writing
// the answer are the gateway's; what they mean is the node's.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { headersToClient, type ClientFacts } from '../rln/forward-headers.ts';
import { sendGatewayError, sendJson } from './gateway-reply.ts';
import type { RlnClient } from '../rln/client.ts';
import type { NodeBearers, NodeCallerRole } from '../rln/node-bearer.ts';
import type { NodePathAnswer, NodePaths } from '../nodes/paths/node-paths.ts';
import type { Node } from '../domain/nodes.ts';

export interface NodeRequestDeps {
  rln: Pick<RlnClient, 'forward'>;
  /**
   * The Biscuits handed to the node in place of the caller's own credential (issue #40); absent
   * (tests of the gateway without root keys): nothing is sent.
   */
  bearers?: NodeBearers;
  /** What a node's path means (the gateways' one entry into nodes/). */
  nodePaths: Pick<NodePaths, 'serve' | 'readsFresh'>;
  log: Logger;
}

export interface NodeRequest {
  requestId: string;
  node: Node;
  route: string;
  search: string;
  client: ClientFacts;
  /** The member who calls (bearer gateway), named in the audit trail; undefined for a certificate. */
  member?: { userId: string; email: string };
  /**
   * What the caller may do now, as the node is told it: read-only for a viewer (or a certificate
   * a viewer issued) and a read-only token, admin otherwise. The node then enforces what the
   * gateway already did, with RLN's own list of read-only routes.
   */
  role: NodeCallerRole;
  /**
   * A customer's node token (issue #40, point 4), checked by the gateway: sent to the node as it is,
   * `Bearer <token>`, in place of a Biscuit of `role`.
   */
  authorization?: string;
}

/** Where the gateways' unlock carries the service's warnings (nodes/unlock/node-identity.ts), one per header line. */
export const WARNING_HEADER = 'x-rln-cloud-warning';

/**
 * Synchronous for a forwarded request (the RLN client answers every failure itself); a promise
 * only for a call nodes/ composes. Throws (or rejects with) an AppError to answer.
 */
export function serveNodeRequest(deps: NodeRequestDeps, req: IncomingMessage, res: ServerResponse, r: NodeRequest): void | Promise<void> {
  const answer = deps.nodePaths.serve(r.node, {
    method: req.method ?? 'GET',
    route: r.route,
    search: r.search,
    client: r.client,
    member: r.member,
    readBody: (limit, what) => readSmallBody(req, limit, what),
  });
  return answer instanceof Promise ? answer.then((a) => send(deps, req, res, r, a)) : send(deps, req, res, r, answer);
}

function send(deps: NodeRequestDeps, req: IncomingMessage, res: ServerResponse, r: NodeRequest, answer: NodePathAnswer) {
  switch (answer.kind) {
    case 'document':
      return sendJson(res, 200, answer.document, { 'x-request-id': r.requestId });
    case 'node answer': {
      // The node's answer passes unchanged; a warning of the service's rides in a header of its own.
      const warnings = answer.warnings.map((w) => `${w.code}: ${w.message}`);
      res.writeHead(answer.answer.status, [...headersToClient(answer.answer.rawHeaders), ...warnings.flatMap((w) => [WARNING_HEADER, w])]);
      res.end(answer.answer.body);
      return;
    }
    case 'forward': {
      // A cached Biscuit comes at once: the forwarding path stays synchronous but for a mint.
      const authorization = r.authorization ?? deps.bearers?.authorization(r.node.id, r.role);
      if (authorization instanceof Promise) return authorization.then((a) => forward(deps, req, res, r, answer, a));
      return forward(deps, req, res, r, answer, authorization);
    }
  }
}

function forward(deps: NodeRequestDeps, req: IncomingMessage, res: ServerResponse, r: NodeRequest, answer: NodePathAnswer & { kind: 'forward' }, authorization: string | undefined) {
  deps.rln.forward({
    req,
    res,
    endpoint: authorization === undefined ? answer.endpoint : { ...answer.endpoint, authorization },
    path: answer.path,
    client: r.client,
    fail: (err, headers) => sendGatewayError(res, r.requestId, err, headers),
    onAnswer: answer.onAnswer,
  });
}

function readSmallBody(req: IncomingMessage, limit: number, what: string): Promise<string> {
  const tooLarge = () => new AppError('payload_too_large', `the ${what} body is larger than ${limit} bytes`);
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        reject(tooLarge());
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
