// The two node access listeners: the bearer gateway (plain HTTP on NODE_API_PORT, the API token
// as credential) and the mutual-TLS gateway (HTTPS on MTLS_PORT, a client certificate from the
// service's CA as credential). They differ only in how a request proves who may use which node.
// Raw node:http rather than fastify: every request is a pass-through, and the per-request cost
// of a framework is what a proxy in front of a node must not add.
import type { NodeCallerRole } from '../rln/node-bearer.ts';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { AuthenticatedUser } from '../accounts/service.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ClientFacts } from '../rln/forward-headers.ts';
import { sendGatewayError } from './gateway-reply.ts';
import { isPreflight, preflightHeaders, responseCorsHeaders, type CorsPolicy } from '../http/cors.ts';
import type { NodeAccess, NodeTarget, PeerCertificate } from './node-access.ts';
import { parseGatewayPath } from './route-path.ts';
import { serveNodeRequest, type NodeRequest, type NodeRequestDeps } from './serve-node-request.ts';
import { RateLimiter, rateLimitHeaders } from '../http/rate-limit.ts';
import type { Node } from '../domain/nodes.ts';
import type { ApiCallMeter } from '../usage/api-call-meter.ts';
import { clientAddress, TRUST_NOBODY, type TrustedProxies } from '../http/client-address.ts';
import { acceptProxyProtocol } from './proxy-protocol.ts';
import { NodeTokenCaller, type BearerCaller } from './node-token-caller.ts';
import type { CustomerNodeTokenCheck } from '../secrets/customer-node-tokens.ts';

export interface GatewayServerDeps extends NodeRequestDeps {
  access: NodeAccess;
  /** GATEWAY_RATE_LIMIT_PER_MINUTE, per token or certificate, in this replica (http/rate-limit.ts). */
  rateLimiter?: RateLimiter;
  /** A request's headers and body must arrive within this (slow clients are cut off with 408). */
  clientTimeoutMs: number;
  log: Logger;
  /** Told of every answered request (metrics/); absent: nobody counts. */
  metrics?: GatewayMetrics;
  /** Counts each request that reached its node against the account's monthly calls; absent: no metering. */
  meter?: Pick<ApiCallMeter, 'admit'>;
  /** TRUSTED_PROXIES: whose X-Forwarded-For (bearer) or PROXY header (mutual TLS) names the client; absent: nobody's. */
  trustedProxies?: TrustedProxies;
  /** Checks customers' node tokens (issue #40, point 4); absent: a Biscuit is refused like any unknown token. */
  nodeTokens?: Pick<CustomerNodeTokenCheck, 'check'>;
}

/** What the gateways report; implemented by metrics/service-metrics.ts. */
export interface GatewayMetrics {
  /** One gateway's recorder, asked for once per listener, so that a request only records. */
  requestRecorder(gateway: 'bearer' | 'mtls'): RequestRecorder;
  /** The certificate the mutual-TLS gateway serves, and when it expires (an alert says so beforehand). */
  certificateServed?(certificate: 'mtls_server', notAfter: Date): void;
}

export type RequestRecorder = (status: number, seconds: number) => void;

// Errors after which the connection is closed: an unread body, or a certificate that must not
// go on being used on a kept-alive connection.
const CLOSE_AFTER = new Set(['payload_too_large', 'certificate_revoked', 'certificate_expired', 'certificate_unknown']);

function timeouts(clientTimeoutMs: number) {
  return {
    requestTimeout: clientTimeoutMs,
    headersTimeout: Math.min(clientTimeoutMs, 10_000),
    // How often node:http looks for requests past those timeouts (its default is 30 s).
    connectionsCheckingInterval: Math.min(1_000, clientTimeoutMs),
  };
}

/**
 * How a gateway decides who the caller is (before anything about the path is said, so strangers
 * learn nothing), then which node that caller may reach. Each answers a value when it needs no
 * database read, else a promise: a request whose lookups are remembered is served without an
 * asynchronous step.
 */
interface Guard<Caller> {
  identify(req: IncomingMessage): Caller | Promise<Caller>;
  /** Whose rate limit a request counts against: its API token, or its client certificate. */
  limitKey(caller: Caller): string;
  /** `fresh`: no remembered lookup (see node-access.ts). */
  nodeFor(caller: Caller, target: NodeTarget, fresh: boolean): Node | Promise<Node>;
  /** The member who calls, for the audit trail (a certificate names none: its serial is in the trail). */
  memberOf?(caller: Caller): NodeRequest['member'];
  /** Whose calls the meter counts it as (GET /api/usage's members and tokens); a certificate's are its issuer's. */
  meterCaller?(caller: Caller): { userId: string; tokenId: string };
  /** The role the node is told the caller has (issue #40), known once nodeFor passed. */
  nodeRole(caller: Caller): NodeCallerRole;
  /** A credential the node is sent as it is (a customer's node token), instead of a Biscuit of nodeRole. */
  nodeAuthorization?(caller: Caller): string | undefined;
}

interface Gateway<C> {
  deps: GatewayServerDeps;
  proto: ClientFacts['proto'];
  prefix: '' | '/nodes';
  guard: Guard<C>;
  /** The client's address: for the audit trail and the node's X-Forwarded-For. */
  clientOf(req: IncomingMessage): string;
}

function handler<C>(deps: GatewayServerDeps, proto: ClientFacts['proto'], guard: Guard<C>, clientOf: (req: IncomingMessage) => string) {
  const gw: Gateway<C> = { deps, proto, prefix: proto === 'http' ? '' : '/nodes', guard, clientOf };
  return (req: IncomingMessage, res: ServerResponse) => {
    const requestId = randomUUID();
    let pending: void | Promise<void>;
    try {
      const caller = guard.identify(req);
      pending = caller instanceof Promise ? caller.then((c) => route(gw, req, res, requestId, c)) : route(gw, req, res, requestId, caller);
    } catch (err) {
      return fail(deps, req, res, requestId, err);
    }
    if (pending) pending.catch((err) => fail(deps, req, res, requestId, err));
  };
}

function fail(deps: GatewayServerDeps, req: IncomingMessage, res: ServerResponse, requestId: string, err: unknown) {
  if (!(err instanceof AppError)) {
    // A client that hangs up mid-upload is the client's business, not a fault of the gateway.
    const code = (err as NodeJS.ErrnoException)?.code;
    if (req.destroyed || code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
      deps.log.info({ requestId, method: req.method, reason: (err as Error)?.message }, 'the client went away before its request was read');
      res.destroy();
      return;
    }
    deps.log.error({ err, requestId, method: req.method }, 'gateway request failed');
  }
  const close = err instanceof AppError && CLOSE_AFTER.has(err.code);
  const headers: Record<string, string> = close ? { connection: 'close' } : {};
  if (err instanceof AppError && err.code === 'unauthorized') headers['www-authenticate'] = 'Bearer';
  if (err instanceof AppError && (err.code === 'rate_limited' || err.code === 'quota_exceeded')) {
    // The fields go in the answer's head only: the body says when in seconds, as the API's does.
    const { headers: fields, ...details } = err.details ?? {};
    Object.assign(headers, fields);
    err = new AppError(err.code, err.message, details);
  }
  sendGatewayError(res, requestId, err, headers);
}

function route<C>(gw: Gateway<C>, req: IncomingMessage, res: ServerResponse, requestId: string, caller: C): void | Promise<void> {
  const limiter = gw.deps.rateLimiter;
  if (limiter?.enabled) {
    const decision = limiter.take(gw.guard.limitKey(caller));
    if (!decision.allowed) {
      throw new AppError('rate_limited', `too many requests: at most ${limiter.policy.limit} a minute through this gateway; try again in ${decision.retryAfterSeconds} s`, {
        headers: rateLimitHeaders(limiter.policy, decision),
        retryAfterSeconds: decision.retryAfterSeconds,
      });
    }
  }
  const path = parseGatewayPath(req.url ?? '', gw.prefix);
  if (!path.ok) throw new AppError(path.code, path.message);
  // The status document and the calls whose success the control plane records read the node afresh.
  const fresh = gw.deps.nodePaths.readsFresh(req.method ?? 'GET', path.route);
  const node = gw.guard.nodeFor(caller, { userId: path.userId, nodeId: path.nodeId, method: req.method ?? 'GET', route: path.route }, fresh);
  return node instanceof Promise ? node.then((n) => serveMetered(gw, req, res, requestId, path, n, caller)) : serveMetered(gw, req, res, requestId, path, node, caller);
}

/** A call the caller may make is counted against its account's month (a Map increment) or refused past the quota. */
function serveMetered<C>(gw: Gateway<C>, req: IncomingMessage, res: ServerResponse, requestId: string, path: { route: string; search: string }, node: Node, caller: C) {
  // The node's user_id is its account (migration 0020), whoever the caller is among its members.
  const admitted = gw.deps.meter?.admit(node.userId, node.id, 'gateway', gw.guard.meterCaller?.(caller));
  return admitted
    ? admitted.then(() => serveNodeRequest(gw.deps, req, res, nodeRequest(gw, req, requestId, path, node, caller)))
    : serveNodeRequest(gw.deps, req, res, nodeRequest(gw, req, requestId, path, node, caller));
}

function nodeRequest<C>(gw: Gateway<C>, req: IncomingMessage, requestId: string, path: { route: string; search: string }, node: Node, caller: C): NodeRequest {
  return {
    requestId,
    node,
    route: path.route,
    search: path.search,
    client: { address: gw.clientOf(req), proto: gw.proto },
    member: gw.guard.memberOf?.(caller),
    role: gw.guard.nodeRole(caller),
    authorization: gw.guard.nodeAuthorization?.(caller),
  };
}

/**
 * Records each request once its connection is done with it: the status the client got and the time
 * from its arrival to the end of the answer (or to the cut of a stream). A request abandoned before
 * any answer has no status and is not counted. Outermost, so preflights and refusals count too.
 */
function measured(record: RequestRecorder | undefined, serve: (req: IncomingMessage, res: ServerResponse) => void) {
  if (!record) return serve;
  return (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    res.once('close', () => {
      if (res.headersSent) record(res.statusCode, (performance.now() - started) / 1000);
    });
    serve(req, res);
  };
}

/**
 * Bearer gateway: `/<user_id>/<node_id>/<route>` with `Authorization: Bearer <API token>`, or a
 * customer's node token (a Biscuit of the node's root key, issue #40): checked here first
 * (node-token-caller.ts), then passed on to the node as it is.
 */
/** `cors`: which browser origins may call nodes with a token (http/cors.ts); null or unset: none. */
export function createBearerGateway(deps: GatewayServerDeps, cors?: CorsPolicy | null): http.Server {
  const isUser = (caller: BearerCaller): caller is AuthenticatedUser => !(caller instanceof NodeTokenCaller);
  const guard: Guard<BearerCaller> = {
    identify: (req) => NodeTokenCaller.of(req.headers.authorization, deps.nodeTokens) ?? deps.access.authenticate(req.headers.authorization),
    limitKey: (caller) => (isUser(caller) ? `token:${caller.tokenId}` : caller.limitKey),
    nodeFor: (caller, target, fresh) => (isUser(caller) ? deps.access.scopedNode(caller, target, fresh) : caller.node(deps.access, target, fresh)),
    memberOf: (caller) => (isUser(caller) ? { userId: caller.id, email: caller.email } : undefined),
    // A node token's calls are its minter's: their cap and the account's quota hold it too.
    meterCaller: (caller) => (isUser(caller) ? { userId: caller.id, tokenId: caller.tokenId } : { userId: caller.mintedBy, tokenId: '' }),
    nodeRole: (caller) => (isUser(caller) ? (caller.scope.readOnly || caller.role === 'viewer' ? 'read-only' : 'admin') : 'admin'),
    nodeAuthorization: (caller) => (isUser(caller) ? undefined : caller.authorization),
  };
  const trusted = deps.trustedProxies ?? TRUST_NOBODY;
  const serve = handler(deps, 'http', guard, (req) => clientAddress(req, trusted));
  return http.createServer({ ...timeouts(deps.clientTimeoutMs) }, measured(deps.metrics?.requestRecorder('bearer'), cors ? withCors(cors, serve) : serve));
}

/**
 * A preflight is answered here, before the token is asked for (a preflight carries none) and
 * without reaching the node; every other answer, the node's included, is marked for the origin.
 * The node's own access-control-* headers never pass (forward-headers.ts): the gateway decides.
 */
function withCors(policy: CorsPolicy, serve: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (isPreflight(req.method, req.headers)) {
      res.writeHead(204, preflightHeaders(policy, req.headers));
      res.end();
      return;
    }
    if (req.headers.origin !== undefined) {
      for (const [name, value] of Object.entries(responseCorsHeaders(policy, req.headers.origin))) res.setHeader(name, value);
    }
    serve(req, res);
  };
}

export interface MtlsMaterial {
  /** The server certificate (with its chain) and key clients see. */
  certificatePem: string;
  privateKeyPem: string;
  /** The CA whose client certificates are accepted; nothing else is. */
  clientCaPem: string;
}

// What the TLS layer proved about a connection's client, read once per connection.
const peers = new WeakMap<TLSSocket, PeerCertificate>();

function peerOf(socket: TLSSocket): PeerCertificate | undefined {
  let peer = peers.get(socket);
  if (!peer) {
    const cert = socket.getPeerCertificate();
    if (!socket.authorized || !cert?.serialNumber) return undefined;
    peer = { serial: cert.serialNumber.toLowerCase(), fingerprint: cert.fingerprint256.replaceAll(':', '').toLowerCase() };
    peers.set(socket, peer);
  }
  return peer;
}

/**
 * Mutual-TLS gateway: `/nodes/<user_id>/<node_id>/<route>`. The handshake itself refuses a client
 * without a certificate, with one from another CA, or an expired one; the certificate's record
 * then decides, on every request, whether it is still good, for which node, and (by its issuer's
 * current role) whether it may change the node.
 *
 * `proxyProtocol` (MTLS_PROXY_PROTOCOL=on): a peer TRUSTED_PROXIES names may send a PROXY protocol
 * header naming the client (proxy-protocol.ts). X-Forwarded-For is never read here: TLS passes
 * through the proxy untouched, so that header could only be the client's own claim.
 */
export function createMtlsGateway(deps: GatewayServerDeps, material: MtlsMaterial, opts: { proxyProtocol?: boolean } = {}): https.Server {
  let proxiedClientOf: ((socket: TLSSocket) => string | undefined) | undefined;
  const guard: Guard<PeerCertificate> = {
    identify(req) {
      const peer = peerOf(req.socket as TLSSocket);
      if (!peer) throw new AppError('certificate_unknown', 'present a client certificate issued by the service');
      return peer;
    },
    nodeFor: (peer, target, fresh) => deps.access.certifiedNode(peer, target, fresh),
    limitKey: (peer) => `certificate:${peer.serial}`,
    // Its issuer's calls (with their tokens and web session): a member's cap holds here too.
    meterCaller: (peer) => ({ userId: peer.issuedBy ?? '', tokenId: '' }),
    nodeRole: (peer) => (peer.issuerReadsOnly ? 'read-only' : 'admin'),
  };
  const server = https.createServer(
    {
      key: material.privateKeyPem,
      cert: material.certificatePem,
      ca: [material.clientCaPem],
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
      ...timeouts(deps.clientTimeoutMs),
    },
    measured(
      deps.metrics?.requestRecorder('mtls'),
      handler(deps, 'https', guard, (req) => proxiedClientOf?.(req.socket as TLSSocket) ?? req.socket.remoteAddress ?? ''),
    ),
  );
  if (opts.proxyProtocol) {
    proxiedClientOf = acceptProxyProtocol(server, { trusted: deps.trustedProxies ?? TRUST_NOBODY, timeoutMs: timeouts(deps.clientTimeoutMs).headersTimeout, log: deps.log });
  }
  // Refused handshakes are the client's problem and expected (scanners, wrong certificates).
  server.on('tlsClientError', (err) => deps.log.debug({ err: err.message }, 'TLS handshake refused'));
  return server;
}
