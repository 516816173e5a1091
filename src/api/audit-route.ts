// Auditing the management API's security-relevant routes: a route names its action in its options
// (`config: { audit: {action, target} }`) and one hook records it once the answer is sent, with
// the caller (token or web session), the source address and the outcome (a 4xx or 5xx answer is
// a failed attempt: a wrong unlock password is as much worth knowing as a right one).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditAction, AuditLog } from '../audit/audit-log.ts';
import { classifyApiRoute } from './route-scope.ts';
import { answeredErrorCode } from './error-handler.ts';

export interface RouteAudit {
  action: AuditAction;
  /** What the action was done to, from the request (and, on success, the answer's payload). */
  target?: (request: FastifyRequest) => string | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    audit?: RouteAudit;
  }
}

/** Who made the request: its API token, or the web session of its user. */
export const actorOf = (request: FastifyRequest) => (request.user?.tokenId ? `token:${request.user.tokenId}` : 'session');

export function auditRoutes(scope: FastifyInstance, audit: AuditLog) {
  // The error code of a refused attempt (wrong_password, node_not_running, ...), for the trail.
  const refusals = new WeakMap<FastifyRequest, string>();
  scope.addHook('onError', async (request, _reply, error) => {
    if (request.routeOptions.config.audit) refusals.set(request, (error as { code?: string }).code ?? 'error');
  });
  scope.addHook('onResponse', async (request, reply) => {
    const spec = request.routeOptions.config.audit;
    // No user: the request never got past authentication (the 401 is not an attempt on a resource).
    if (!spec || !request.user) return;
    await audit.record({
      userId: request.user.accountId,
      actor: actorOf(request),
      actorUserId: request.user.id,
      actorEmail: request.user.email,
      sourceIp: request.ip,
      action: spec.action,
      target: spec.target?.(request) ?? null,
      nodeId: nodeOfRequest(request) ?? null,
      outcome: reply.statusCode < 400 ? 'succeeded' : 'failed',
      details: reply.statusCode < 400 ? {} : { status: reply.statusCode, code: answeredErrorCode(request) ?? refusals.get(request) ?? null },
    });
  });
}

/** The node a request is about, found as the token scopes find it (route-scope.ts). */
function nodeOfRequest(request: FastifyRequest): string | undefined {
  const { node } = classifyApiRoute(request.method, request.routeOptions.url);
  const id =
    node === 'param' ? (request.params as { id?: unknown } | undefined)?.id
    : node === 'body' ? (request.body as { destroyNodeId?: unknown } | undefined)?.destroyNodeId
    : undefined;
  return typeof id === 'string' ? id : undefined;
}

/** The node a route is about: its `:id`. */
export const nodeParam = (request: FastifyRequest) => (request.params as { id?: string }).id;
