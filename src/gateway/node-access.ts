// Who may reach which node through the gateways. With a token: the token's owner, for their own
// nodes, where another user's node and a missing one are indistinguishable (404), and only within
// the token's scope (403 forbidden_scope: accounts/token-scope.ts, RLN routes classified by
// route-scope.ts). With a client certificate: the node and user the certificate was issued for,
// as long as its record is not revoked or expired, with what its issuer's current role allows (a
// viewer reads only, as through the bearer gateway; a certificate is for one node already).
//
// Every lookup is a database query, and one query costs more than the whole rest of a forwarded
// request (~0.6 ms on PGlite), so positive lookups (token -> user, user + node -> node row,
// serial -> certificate record) are reused for at most ACCESS_CACHE_MS (1 s). What keeps that safe:
// - a revocation in this process (API, web UI, and the operator CLI, which with PGlite runs in
//   this process too), and a member's role change or removal, drops the entry at once, so it takes effect on the very next request, also
//   on a kept-alive connection; a revocation written to a shared PostgreSQL by another process
//   takes effect within ACCESS_CACHE_MS;
// - a certificate's expiry and binding are checked against the remembered record on every request;
// - a remembered node row is used only while the runtime still runs that node's daemon here, so a
//   stopped, upgrading or destroyed node is read afresh (409/404 at once, and a freed port that a
//   new node took over is never reached through an old row);
// - failures are never remembered (a new token, node or certificate works at once), and the node
//   status document and the calls the control plane records (unlock, init, lock) always read afresh.
import type { AccountService, AuthenticatedUser } from '../accounts/service.ts';
import { findCertificateWithNode, type PresentedCertificate } from '../db/certificates.ts';
import type { Database } from '../db/database.ts';
import { findUserNode } from '../db/nodes.ts';
import { tokenFromAuthorization } from '../auth/authorization-header.ts';
import { AppError, nodeNotFound } from '../errors.ts';
import { allowsNode, forbiddenScope, requireListener } from '../accounts/token-scope.ts';
import { isReadOnlyNodeRequest } from './route-scope.ts';
import type { Node } from '../domain/nodes.ts';
import type { NodeRuntime } from '../runtime/types.ts';

/** What the TLS layer proved about the client: a certificate our CA signed, in date at handshake. */
export interface PeerCertificate {
  serial: string;
  fingerprint: string;
  /**
   * The member who issued it (null: the operator did), once its record was checked: the meter
   * counts its calls as theirs, so a member's cap holds their certificates too. A certificate's
   * issuer never changes, so it stays with the connection.
   */
  issuedBy?: string | null;
  /** Its issuer is a viewer now (read on every request with the record): the node is told read-only. */
  issuerReadsOnly?: boolean;
}

/** The longest a positive lookup is reused (see above). */
export const ACCESS_CACHE_MS = 1_000;
const CACHE_MAX_ENTRIES = 10_000;

/** Positive lookups, each kept for at most `ttlMs` from when it was read. */
class ShortCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  constructor(private readonly ttlMs: number) {}

  get(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until > performance.now()) return hit.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V) {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= CACHE_MAX_ENTRIES) {
      const now = performance.now();
      for (const [k, e] of this.entries) if (e.until <= now) this.entries.delete(k);
      if (this.entries.size >= CACHE_MAX_ENTRIES) this.entries.clear();
    }
    this.entries.set(key, { value, until: performance.now() + this.ttlMs });
  }

  deleteWhere(test: (key: string, value: V) => boolean) {
    for (const [k, e] of this.entries) if (test(k, e.value)) this.entries.delete(k);
  }
}

/** What a gateway request asks for: a user's node, and a route of it with a method. */
export interface NodeTarget {
  userId: string;
  nodeId: string;
  method: string;
  /** As route-path.ts canonicalises it: 'nodeinfo', '' for the node itself. */
  route: string;
}

export interface NodeAccessDeps {
  db: Database;
  accounts: AccountService;
  /**
   * What runs the daemons: asked whether this process runs the node's daemon now; without it, node
   * rows are never reused. Answering synchronously (a boolean) keeps a request whose lookups are
   * remembered free of any asynchronous step.
   */
  runtime?: Pick<NodeRuntime, 'runsDaemon'>;
  /** ACCESS_CACHE_MS unless set; 0 turns reuse off. */
  cacheMs?: number;
}

// The lookups answer a value when everything needed was remembered (the common case, on the
// path of every forwarded request) and a promise only when the database must be read.
export class NodeAccess {
  private readonly users: ShortCache<AuthenticatedUser>;
  private readonly nodes: ShortCache<Node>;
  private readonly certificates: ShortCache<PresentedCertificate>;

  constructor(private readonly deps: NodeAccessDeps) {
    const ttl = deps.cacheMs ?? ACCESS_CACHE_MS;
    this.users = new ShortCache(ttl);
    this.nodes = new ShortCache(deps.runtime ? ttl : 0);
    this.certificates = new ShortCache(deps.runtime ? ttl : 0);
    deps.accounts.onTokenRevoked((tokenId) => this.forgetToken(tokenId));
    deps.accounts.onMemberChanged((userId) => this.forgetMember(userId));
  }

  /**
   * Called the moment a member's role changes or they are removed in this process: their tokens
   * carried the old role, and the certificates they issued end with their membership.
   */
  forgetMember(userId: string) {
    this.users.deleteWhere((_k, user) => user.id === userId);
    this.certificates.deleteWhere((_k, found) => found.cert.issued_by === userId);
  }

  /** Called the moment a token is revoked in this process. */
  forgetToken(tokenId: string) {
    this.users.deleteWhere((_k, user) => user.tokenId === tokenId);
  }

  /** Called the moment a certificate is revoked in this process. */
  forgetCertificate(serial: string) {
    this.certificates.deleteWhere((k) => k === serial);
  }

  authenticate(authorization: string | undefined): AuthenticatedUser | Promise<AuthenticatedUser> {
    const remembered = authorization ? this.users.get(authorization) : undefined;
    return remembered ?? this.readUser(authorization);
  }

  private async readUser(authorization: string | undefined): Promise<AuthenticatedUser> {
    const token = tokenFromAuthorization(authorization);
    const user = token ? await this.deps.accounts.authenticate(token) : undefined;
    if (!user) {
      throw new AppError('unauthorized', token ? 'the API token is invalid, expired or revoked' : 'send an API token: Authorization: Bearer <token>');
    }
    this.users.set(authorization!, user);
    return user;
  }

  /**
   * The node a token's request may reach: its owner's node within the token's scope. What the
   * scope says about the route alone (the listener, read-only) is decided first, without a lookup;
   * a node outside the token's nodes is 403 only once it is known to be the owner's, so another
   * user's node still answers exactly like a missing one.
   */
  scopedNode(user: AuthenticatedUser, target: NodeTarget, fresh = false): Node | Promise<Node> {
    const { scope } = user;
    requireListener(scope, 'gateway');
    if ((scope.readOnly || user.role === 'viewer') && !isReadOnlyNodeRequest(target.method, target.route)) {
      const who = scope.readOnly ? 'this API token is read-only' : "your role in this account is viewer, who only reads";
      throw forbiddenScope(`${who}: ${target.method} /${target.route.slice(0, 64)} may change the node (the read-only routes are RLN's own, see docs/API.md "Token scopes")`);
    }
    const node = this.ownedNode(user, target.userId, target.nodeId, fresh);
    if (allowsNode(scope, target.nodeId)) return node;
    return Promise.resolve(node).then(() => {
      throw forbiddenScope(`this API token is limited to other nodes than ${target.nodeId}`);
    });
  }

  /** `fresh`: read the node row even if one was read less than ACCESS_CACHE_MS ago. */
  ownedNode(user: AuthenticatedUser, userId: string, nodeId: string, fresh = false): Node | Promise<Node> {
    if (userId !== user.accountId) return Promise.reject(nodeNotFound(nodeId));
    return this.accountNode(userId, nodeId, fresh);
  }

  /** The node of the path's account (a node token is checked against the node itself, not an account). */
  accountNode(userId: string, nodeId: string, fresh = false): Node | Promise<Node> {
    const key = `${userId}/${nodeId}`;
    const remembered = fresh ? undefined : this.nodes.get(key);
    if (remembered) {
      const runs = this.stillRuns(remembered);
      if (runs === true) return remembered;
      if (runs !== false) return runs.then((yes) => (yes ? remembered : this.readNode(key, userId, nodeId)));
    }
    return this.readNode(key, userId, nodeId);
  }

  private async readNode(key: string, userId: string, nodeId: string): Promise<Node> {
    const node = await findUserNode(this.deps.db, userId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    this.nodes.set(key, node);
    return node;
  }

  /**
   * The node a certificate's request may reach: the one it was issued for, with what its issuer's
   * role allows now (a viewer, e.g. a developer demoted after issuing it, reads only: the routes a
   * read-only token may call). The role is the remembered record's, dropped the moment the issuer
   * changes here and read afresh within ACCESS_CACHE_MS otherwise, exactly like a token's.
   */
  certifiedNode(peer: PeerCertificate, target: NodeTarget, fresh = false): Node | Promise<Node> {
    const remembered = fresh ? undefined : this.certificates.get(peer.serial);
    if (remembered) {
      const runs = this.stillRuns(remembered.node);
      if (runs === true) return this.checkCertificate(peer, target, remembered, remembered);
      if (runs !== false) return runs.then((yes) => (yes ? this.checkCertificate(peer, target, remembered, remembered) : this.readCertificate(peer, target)));
    }
    return this.readCertificate(peer, target);
  }

  private async readCertificate(peer: PeerCertificate, target: NodeTarget): Promise<Node> {
    return this.checkCertificate(peer, target, await findCertificateWithNode(this.deps.db, peer.serial), undefined);
  }

  private checkCertificate(peer: PeerCertificate, target: NodeTarget, found: PresentedCertificate | undefined, remembered: PresentedCertificate | undefined): Node {
    // An unknown serial or another fingerprint: signed by our CA but not a certificate we recorded
    // (a database restored from before it, or a CA key used elsewhere). Never trusted.
    if (!found || found.cert.fingerprint !== peer.fingerprint) {
      throw new AppError('certificate_unknown', 'this client certificate is not one the service issued');
    }
    if (found.cert.revoked_at) throw new AppError('certificate_revoked', `certificate ${peer.serial} was revoked`);
    if (found.cert.not_after.getTime() <= Date.now()) throw new AppError('certificate_expired', `certificate ${peer.serial} has expired`);
    if (found !== remembered) this.certificates.set(peer.serial, found);
    peer.issuedBy = found.cert.issued_by;
    peer.issuerReadsOnly = found.issuerRole === 'viewer';
    if (found.cert.user_id !== target.userId || found.node.id !== target.nodeId) {
      throw new AppError('certificate_not_for_node', 'this client certificate was issued for another node; use that node\'s path or a certificate for this one');
    }
    if (found.issuerRole === 'viewer' && !isReadOnlyNodeRequest(target.method, target.route)) {
      throw forbiddenScope(
        `the member who issued this certificate is now a viewer in this account, who only reads: ${target.method} /${target.route.slice(0, 64)} may change the node (the read-only routes are RLN's own, see docs/API.md "Token scopes")`,
      );
    }
    return found.node;
  }

  private stillRuns(node: Node): boolean | Promise<boolean> {
    return node.status === 'RUNNING' && this.deps.runtime !== undefined && this.deps.runtime.runsDaemon(node.id);
  }
}
