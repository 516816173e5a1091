// The security checks every bearer-authenticated route shares: no token, a malformed token, a
// revoked token; for routes about one node, another user's attempt; and the token scopes. And what
// a member's demotion or removal must end, credential by credential (itEndsAChangedMembersCredentials).
import { expect, it } from 'vitest';
import type { CallOptions, CallResult, TestServer, TestUser } from './server.ts';
import { anotherReplicasMembers, memberWithEveryCredential, type CredentialedMember } from './members.ts';
import { gatewayError } from './gateway-error.ts';
import { rawRequest, tlsRequest, type RawResult } from '../gateway/gateway-client.ts';
import type { SseClient } from '../events/sse-client.ts';

export interface RouteUnderTest {
  name: string;
  path: (nodeId: string) => string;
  method: string;
  body?: (nodeId: string) => unknown;
}

export function itRequiresBearerAuth(ctx: () => { t: TestServer; revoked: TestUser; nodeId: string }, route: RouteUnderTest) {
  const call = (opts: CallOptions) => {
    const { t, nodeId } = ctx();
    return t.call(route.path(nodeId), { method: route.method, body: route.body?.(nodeId), ...opts });
  };
  it(`${route.name}: no token -> 401`, async () => {
    const r = await call({});
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('unauthorized');
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
  });
  it(`${route.name}: malformed or unknown token -> 401`, async () => {
    for (const token of ['nope', `rlnc_${'A'.repeat(43)}`]) {
      const r = await call({ token });
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('unauthorized');
    }
  });
  it(`${route.name}: revoked token -> 401`, async () => {
    const r = await call({ token: ctx().revoked.token });
    expect(r.status).toBe(401);
    // Also as a bare token, the original service's form.
    expect((await call({ headers: { authorization: ctx().revoked.token } })).status).toBe(401);
  });
  it(`${route.name}: another scheme, an empty value or the scheme alone -> 401`, async () => {
    for (const authorization of [`Basic ${Buffer.from('a:b').toString('base64')}`, 'Bearer', 'Bearer ', `Token rlnc_${'A'.repeat(43)}`]) {
      const r = await call({ headers: { authorization } });
      expect(r.status, authorization).toBe(401);
      expect(r.json.error.code).toBe('unauthorized');
    }
  });
}

const MISSING_NODE = 'f'.repeat(32);

/**
 * Another user naming the node answers exactly like a node that does not exist (404
 * node_not_found, the same body but for the id and request id), so nobody learns which ids exist.
 */
export function itHidesAnotherUsersNode(ctx: () => { t: TestServer; other: Pick<TestUser, 'token'>; nodeId: string }, route: RouteUnderTest, who = "another user's node") {
  it(`${route.name}: ${who} -> 404 like a missing node`, async () => {
    const { t, other, nodeId } = ctx();
    const call = (id: string) => t.call(route.path(id), { method: route.method, body: route.body?.(id), token: other.token });
    const [foreign, missing] = [await call(nodeId), await call(MISSING_NODE)];
    expect(foreign.status, foreign.text).toBe(404);
    expect(foreign.json.error.code).toBe('node_not_found');
    const comparable = (error: any, id: string) => ({ ...error, requestId: '', message: error.message.replaceAll(id, 'X') });
    expect(comparable(foreign.json.error, nodeId)).toEqual(comparable(missing.json.error, MISSING_NODE));
  });
}

export interface ScopedRouteUnderTest extends RouteUnderTest {
  /** Changes something: a read-only token is refused it. */
  write: boolean;
  /** About one node: a token limited to other nodes is refused it. */
  nodeScoped: boolean;
  /** Answers a stream that never ends (Server-Sent Events): only its status and headers are read. */
  streams?: boolean;
  /** About the account beyond any node (uploaded backups): a token limited to some nodes is refused it, reads too. */
  accountWide?: boolean;
  /**
   * Issues or revokes a credential (a token, a client certificate): refused to every scoped token,
   * even one limited to this very node or to the management API, as a scoped token must never
   * produce a credential with more rights than its own.
   */
  credential?: boolean;
}

/** Opens a streaming route, reads the answer's status (and body, when it is an error), and hangs up. */
async function callStream(t: TestServer, path: string, token: string): Promise<CallResult> {
  const controller = new AbortController();
  const res = await fetch(`${t.base}${path}`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  const text = res.status === 200 ? '' : await res.text();
  controller.abort();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text, headers: res.headers };
}

/** Tokens of the owner of the node under test, each with one limit (docs/API.md "Token scopes"). */
export interface ScopedTokens {
  readOnly: string;
  /** Limited to the node under test. */
  thisNode: string;
  /** Limited to another node of the same owner. */
  otherNode: string;
  /** access "gateway": not for the management API at all. */
  gatewayOnly: string;
  /** access "api": every right on the management API, none on the node gateways. */
  apiOnly: string;
}

const refusedForScope = (r: CallResult) => {
  expect(r.status, r.text).toBe(403);
  expect(r.json.error.code).toBe('forbidden_scope');
};
// Whatever the route then answers (200, 404 for a made-up id, ...), the scope let it through.
const allowedByScope = (r: CallResult) => {
  expect(r.status, r.text).not.toBe(401);
  expect(r.json?.error?.code, r.text).not.toBe('forbidden_scope');
};

/**
 * A scoped token gets 403 forbidden_scope wherever its scope ends, and nothing happens: a
 * read-only token on every write; a token limited to some nodes on every route about another of
 * its owner's nodes and on every write about no node; a gateway-only token everywhere. Writes a
 * token's scope allows are not called here (they would change the node under test).
 */
export function itEnforcesTokenScopes(ctx: () => { t: TestServer; tokens: ScopedTokens; nodeId: string }, route: ScopedRouteUnderTest) {
  const call = (pick: (tokens: ScopedTokens) => string) => {
    const { t, tokens, nodeId } = ctx();
    if (route.streams) return callStream(t, route.path(nodeId), pick(tokens));
    return t.call(route.path(nodeId), { method: route.method, body: route.body?.(nodeId), token: pick(tokens) });
  };
  if (route.write) it(`${route.name}: a read-only token -> 403 forbidden_scope`, async () => refusedForScope(await call((k) => k.readOnly)));
  else it(`${route.name}: a read-only token may call it`, async () => allowedByScope(await call((k) => k.readOnly)));
  if (route.nodeScoped) {
    it(`${route.name}: a token for another of the owner's nodes -> 403 forbidden_scope`, async () => refusedForScope(await call((k) => k.otherNode)));
    if (!route.write) it(`${route.name}: a token for this node may call it`, async () => allowedByScope(await call((k) => k.thisNode)));
  } else if (route.write || route.accountWide) {
    it(`${route.name}: a token limited to some nodes -> 403 forbidden_scope`, async () => refusedForScope(await call((k) => k.thisNode)));
  } else {
    it(`${route.name}: a token limited to some nodes may call it`, async () => allowedByScope(await call((k) => k.thisNode)));
  }
  it(`${route.name}: a gateway-only token -> 403 forbidden_scope`, async () => refusedForScope(await call((k) => k.gatewayOnly)));
  if (route.credential) {
    it(`${route.name}: a credential route -> 403 forbidden_scope to a token limited to this node`, async () => refusedForScope(await call((k) => k.thisNode)));
    it(`${route.name}: a credential route -> 403 forbidden_scope to an api-only token`, async () => refusedForScope(await call((k) => k.apiOnly)));
  }
}

/**
 * Text PostgreSQL cannot store as sent (a NUL, a lone surrogate) or should not store whole (far
 * longer than any field allows), as a client can put it in a JSON string or a percent-encoded path.
 */
export const HOSTILE_TEXTS: Record<string, string> = {
  'a NUL byte': 'x\u0000y',
  'a lone surrogate': 'x\uD800y',
  'an over-long string': 'x'.repeat(4000),
};

/** A route that stores (or records in the audit trail) text a client sent. */
export interface StoringRouteUnderTest {
  name: string;
  /** The request with `text` where the client's text goes. */
  request: (text: string, nodeId: string) => { path: string; method: string; body?: unknown; token?: string };
  /** The audit action the attempt must be recorded as, whatever it answers. */
  audit?: string;
  /**
   * The text goes in a path parameter: past Fastify's maxParamLength (100) the router answers 414,
   * and the bytes of a lone surrogate (not UTF-8) 400, before any route is matched: no attempt on
   * a resource, nothing to record.
   */
  inPath?: boolean;
}

interface RecordedEvent {
  id: string;
  action: string;
  target: string | null;
  details: Record<string, unknown>;
}

/**
 * Hostile text never makes a route fail (no 500: the database edge makes it storable), and an
 * audited route records the attempt with what cannot be stored replaced by U+FFFD and an
 * over-long text cut short with a marker (docs/API.md "Audit trail").
 */
export function itStoresHostileInput(
  ctx: () => { t: TestServer; token: string; nodeId: string; latestAuditEvents: () => Promise<RecordedEvent[]> },
  route: StoringRouteUnderTest,
) {
  for (const [what, text] of Object.entries(HOSTILE_TEXTS)) {
    it(`${route.name}: ${what} is answered without a 500${route.audit ? ' and recorded in the audit trail' : ''}`, async () => {
      const { t, token, nodeId, latestAuditEvents } = ctx();
      const before = (await latestAuditEvents())[0]?.id ?? '0';
      const req = route.request(text, nodeId);
      const r = await t.call(req.path, { method: req.method, body: req.body, token: req.token ?? token });
      expect(r.status, r.text).toBeLessThan(500);
      if (route.inPath && (text.length > 100 || /[\uD800-\uDFFF]/.test(text))) {
        expect([400, 414]).toContain(r.status);
        return;
      }
      if (!route.audit) return;
      // The trail is written once the answer is sent: give it a moment.
      let recorded: RecordedEvent | undefined;
      for (let i = 0; i < 50 && !recorded; i++) {
        recorded = (await latestAuditEvents()).find((e) => BigInt(e.id) > BigInt(before) && e.action === route.audit);
        if (!recorded) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(recorded, `no ${route.audit} event after ${req.method} ${req.path.slice(0, 80)}`).toBeDefined();
      const stored = JSON.stringify(recorded);
      expect(stored).not.toMatch(/\\u0000|\\ud[89ab]/i);
      expect(recorded!.target?.length ?? 0).toBeLessThan(1000);
      if (text.length > 1000 && recorded!.target?.startsWith('xxx')) expect(recorded!.target).toMatch(/…\[truncated: \d+ characters\]$/);
      if (text.includes('\u0000') && recorded!.target?.startsWith('x')) expect(recorded!.target).toContain('x\uFFFDy');
    });
  }
}

export interface MemberChangeContext {
  t: TestServer;
  /** The owner of the account and of the node under test. */
  owner: TestUser;
  nodeId: string;
}

/** How long a change made by another replica may take to show (the gateways' one second), with room for a busy machine. */
const ANOTHER_REPLICAS_SECOND_MS = 5_000;
const MISSING_TOKEN = 'a'.repeat(32);

/** Every way a credentialed member reaches the account, as their clients would. */
function reachesOf(ctx: MemberChangeContext, m: CredentialedMember) {
  const { t, owner, nodeId } = ctx;
  const nodePath = (route: string) => `/${owner.id}/${nodeId}${route === '' ? '' : `/${route}`}`;
  const gatewayWrites = [
    ['POST', 'lock', undefined],
    ['POST', 'unlock', JSON.stringify({ password: 'not-the-password' })],
  ] as const;
  const json = (body: string | undefined): Record<string, string> => (body ? { 'content-type': 'application/json' } : {});
  return {
    // A developer's write about nothing that exists: allowed, it answers 404 token_not_found.
    apiWrite: () => t.call(`/api/tokens/${MISSING_TOKEN}`, { method: 'DELETE', token: m.token }),
    apiRead: () => t.call('/api/nodes', { token: m.token }),
    sessionWrite: () => t.call(`/api/tokens/${MISSING_TOKEN}`, { method: 'DELETE', headers: { cookie: m.session.cookie, 'x-csrf-token': m.session.csrf } }),
    sessionRead: () => t.call('/api/nodes', { headers: { cookie: m.session.cookie } }),
    bearer: (method: string, route: string, body?: string) =>
      rawRequest(t.config.nodeApiUrl, nodePath(route), { method, body, headers: { authorization: `Bearer ${m.token}`, ...json(body) } }),
    mtls: (method: string, route: string, body?: string) =>
      tlsRequest(t.config.userNodeUrl, `/nodes${nodePath(route)}`, { ...m.certificate, ca: m.certificate.certificateChain }, { method, body, headers: json(body) }),
    gatewayWrites,
    accept: () => t.call('/api/account/invitations/accept', { method: 'POST', body: { token: m.invitation.secret, password: 'invited-password-1' } }),
    invitations: async (status?: 'revoked') => (await t.call(`/api/account/invitations${status ? `?status=${status}` : ''}`, { token: owner.token })).json.invitations as any[],
  };
}

const gatewayCode = (r: RawResult) => (r.json?.rln_cloud ? gatewayError(r).code : `node answered ${r.status}`);

async function ended(stream: SseClient, what: string) {
  const done = await Promise.race([stream.ended.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ANOTHER_REPLICAS_SECOND_MS))]);
  expect(done, `${what}: the event stream is still open`).toBe(true);
}

async function invitationEnded(reach: ReturnType<typeof reachesOf>, m: CredentialedMember) {
  const accepted = await reach.accept();
  expect(accepted.status, accepted.text).toBe(404);
  expect(accepted.json.error.code).toBe('invitation_not_found');
  expect((await reach.invitations()).map((i) => i.id)).not.toContain(m.invitation.id);
  expect(await reach.invitations('revoked')).toContainEqual(expect.objectContaining({ id: m.invitation.id, revokedAt: expect.any(String) }));
}

/** A demoted viewer: reads still work everywhere, every change is refused, whatever the credential. */
async function readsOnly(reach: ReturnType<typeof reachesOf>, what: string) {
  await expect.poll(async () => gatewayCode(await reach.mtls('POST', 'lock')), { timeout: ANOTHER_REPLICAS_SECOND_MS, message: `${what}: mTLS` }).toBe('forbidden_scope');
  await expect.poll(async () => gatewayCode(await reach.bearer('POST', 'lock')), { timeout: ANOTHER_REPLICAS_SECOND_MS, message: `${what}: bearer` }).toBe('forbidden_scope');
  await expect.poll(async () => (await reach.apiWrite()).status, { timeout: ANOTHER_REPLICAS_SECOND_MS, message: `${what}: token` }).toBe(403);
  for (const [method, route, body] of reach.gatewayWrites) {
    const viaMtls = await reach.mtls(method, route, body);
    expect(viaMtls.status, `${what}: mTLS ${route} ${viaMtls.text}`).toBe(403);
    expect(gatewayError(viaMtls).code).toBe('forbidden_scope');
    expect(gatewayError(viaMtls).message).toContain('viewer');
    const viaBearer = await reach.bearer(method, route, body);
    expect(viaBearer.status, `${what}: bearer ${route} ${viaBearer.text}`).toBe(403);
    expect(gatewayError(viaBearer).code).toBe('forbidden_scope');
  }
  expect((await reach.mtls('GET', '')).status).toBe(200);
  expect((await reach.bearer('GET', '')).status).toBe(200);
  for (const write of [reach.apiWrite, reach.sessionWrite]) {
    const r = await write();
    expect(r.status, `${what}: ${r.text}`).toBe(403);
    expect(r.json.error.code).toBe('forbidden_role');
  }
  expect((await reach.apiRead()).status).toBe(200);
  expect((await reach.sessionRead()).status).toBe(200);
}

/** A removed member: every credential refused, the streams ended, the invitation dead. */
async function nothingLeft(reach: ReturnType<typeof reachesOf>, m: CredentialedMember, what: string) {
  await expect.poll(async () => (await reach.bearer('GET', '')).status, { timeout: ANOTHER_REPLICAS_SECOND_MS, message: `${what}: bearer gateway` }).toBe(401);
  await expect.poll(async () => gatewayCode(await reach.mtls('GET', '')), { timeout: ANOTHER_REPLICAS_SECOND_MS, message: `${what}: mTLS` }).toBe('certificate_unknown');
  await expect.poll(async () => (await reach.apiRead()).status, { timeout: ANOTHER_REPLICAS_SECOND_MS, message: `${what}: token` }).toBe(401);
  expect((await reach.sessionRead()).status).toBe(401);
  await ended(m.streams.token, `${what}, token`);
  await ended(m.streams.session, `${what}, session`);
  await invitationEnded(reach, m);
}

/**
 * A member (an admin) holding a token, a web session, a client certificate, two event streams and
 * a pending invitation at once: demoted to viewer, every credential reads only from its next
 * request and the invitation is revoked (listed as such, its link 404); removed, every credential
 * stops, the streams end and the invitation dies. The same when another replica (a shared
 * database, nobody here told) makes the change: within the gateways' second.
 */
export function itEndsAChangedMembersCredentials(ctx: () => MemberChangeContext) {
  const afterwards = (m: CredentialedMember) => () => {
    m.streams.token.close();
    m.streams.session.close();
  };

  it('a demotion to viewer: every credential reads only at once, the streams go on, the invitation is revoked', async () => {
    const c = ctx();
    const m = await memberWithEveryCredential(c.t, c.owner, c.nodeId);
    const reach = reachesOf(c, m);
    try {
      // Before: an admin writes through every credential (a missing token is the route's own 404).
      expect((await reach.apiWrite()).json.error.code).toBe('token_not_found');
      expect(gatewayCode(await reach.mtls('POST', 'lock'))).not.toBe('forbidden_scope');
      const changed = await c.t.call(`/api/account/members/${m.id}`, { method: 'PATCH', token: c.owner.token, body: { role: 'viewer' } });
      expect(changed.status, changed.text).toBe(200);
      await readsOnly(reach, 'demoted here');
      await invitationEnded(reach, m);
      // A viewer may follow the events: the recheck the change caused must not end the streams.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(m.streams.token.isDone).toBe(false);
      expect(m.streams.session.isDone).toBe(false);
    } finally {
      afterwards(m)();
    }
  });

  it('a removal: the token, session, certificate, event streams and invitation all end', async () => {
    const c = ctx();
    const m = await memberWithEveryCredential(c.t, c.owner, c.nodeId);
    try {
      const removed = await c.t.call(`/api/account/members/${m.id}`, { method: 'DELETE', token: c.owner.token });
      expect(removed.status, removed.text).toBe(204);
      await nothingLeft(reachesOf(c, m), m, 'removed here');
    } finally {
      afterwards(m)();
    }
  });

  it('leaving: the token, session, certificate, event streams and invitation all end, as with a removal', async () => {
    const c = ctx();
    const m = await memberWithEveryCredential(c.t, c.owner, c.nodeId);
    try {
      const left = await c.t.call('/api/account/leave', { method: 'POST', body: { confirm: true }, headers: { cookie: m.session.cookie, 'x-csrf-token': m.session.csrf } });
      expect(left.status, left.text).toBe(204);
      await nothingLeft(reachesOf(c, m), m, 'left');
    } finally {
      afterwards(m)();
    }
  });

  it("another replica's demotion and removal reach every credential here within the gateways' second", async () => {
    const c = ctx();
    const m = await memberWithEveryCredential(c.t, c.owner, c.nodeId);
    const reach = reachesOf(c, m);
    const elsewhere = anotherReplicasMembers(c.t);
    try {
      // Remembered here first: the gateways and the token hold the admin's role.
      expect((await reach.mtls('GET', '')).status).toBe(200);
      expect((await reach.bearer('GET', '')).status).toBe(200);
      await elsewhere.changeRole(c.owner.id, m.id, 'viewer');
      await readsOnly(reach, 'demoted elsewhere');
      await invitationEnded(reach, m);
      await elsewhere.removeMember(c.owner.id, m.id);
      await nothingLeft(reach, m, 'removed elsewhere');
    } finally {
      afterwards(m)();
    }
  });
}

/**
 * The client's address behind a proxy (TRUSTED_PROXIES): the server under test trusts
 * TRUSTED_PEER only, and the test connects from either loopback address (Linux answers all of
 * 127.0.0.0/8), so both peers reach the same listener.
 */
export const TRUSTED_PEER = '127.0.0.2';
export const UNTRUSTED_PEER = '127.0.0.1';

export interface AttributingListener {
  name: string;
  /**
   * Sends one request the service attributes to a client (an audited call) from `peer`, claiming
   * `claimed` as the client the listener's way (X-Forwarded-For, a PROXY header); answers the
   * address the service recorded, or 'refused' when the connection was cut.
   */
  attribute(peer: string, claimed: string): Promise<string>;
  /** What becomes of a claim from an untrusted peer: left unread, or the connection cut. */
  untrustedClaim: 'ignored' | 'refused';
}

let claimedCounter = 0;

export function itBelievesOnlyTrustedProxies(listener: AttributingListener) {
  const claim = () => `203.0.113.${(++claimedCounter % 250) + 1}`;
  it(`${listener.name}: a client address claimed through an untrusted peer is ${listener.untrustedClaim}`, async () => {
    const recorded = await listener.attribute(UNTRUSTED_PEER, claim());
    expect(recorded).toBe(listener.untrustedClaim === 'ignored' ? UNTRUSTED_PEER : 'refused');
  });
  it(`${listener.name}: the client address a trusted proxy forwards is the one recorded`, async () => {
    const claimed = claim();
    expect(await listener.attribute(TRUSTED_PEER, claimed)).toBe(claimed);
  });
}

/**
 * Node ids a client can put in a path (percent-encoded): a NUL byte, as long as the router lets
 * through (maxParamLength 100), unicode, and in `itMetersOnlyRealNodes` another account's node.
 */
export const HOSTILE_NODE_IDS: Record<string, string> = {
  'a NUL byte': encodeURIComponent('abc\u0000def'),
  'a very long id': 'a'.repeat(100),
  'unicode': encodeURIComponent('nœud-ü-節点'),
};

/**
 * A route that counts against the monthly API calls (docs/USAGE.md) named with a hostile node id
 * answers without a 500, its call is counted under no node, and the meter's next batch is
 * written: no input poisons the counts (issue #37).
 */
export function itMetersOnlyRealNodes(
  ctx: () => { t: TestServer; token: string; accountId: string; ownNodes: readonly string[]; foreignNode: string },
  route: RouteUnderTest,
) {
  it(`${route.name}: a hostile node id in the path is counted under no node, and the meter's batch is written`, async () => {
    const { t, token, accountId, ownNodes, foreignNode } = ctx();
    for (const id of [...Object.values(HOSTILE_NODE_IDS), foreignNode]) {
      const r = await t.call(route.path(id), { method: route.method, body: route.body?.(id), token });
      expect(r.status, `${route.method} ${route.path(id).slice(0, 60)}: ${r.text}`).toBeLessThan(500);
    }
    expect(await t.server.services.meter.flush()).toBe(true);
    const rows = await t.server.db.query<{ node_id: string }>('SELECT DISTINCT node_id FROM api_call_counts WHERE account_id = $1', [accountId]);
    expect(rows.map((r) => r.node_id).filter((id) => id !== '' && !ownNodes.includes(id))).toEqual([]);
  });
}
