// An account's members over real HTTP (issue #27): the owner invites, the invitee accepts the
// one-time link and works on the account's nodes at their URLs with their role's rights, through
// the API and both gateways; a removed member's token, web session and certificate stop at once.
// Also: each role on the member routes, another account's attempts, bad input, the invitation's
// reuse, revocation and expiry, the plan's user limit at its edge, and the audit trail's actors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes } from '../helpers/tenants.ts';
import { rawRequest, tlsRequest, type ClientCredentials } from '../gateway/gateway-client.ts';
import { gatewayError } from '../helpers/gateway-error.ts';

const PASSWORD = 'member-password-1';

interface Member extends TestUser {
  role: string;
}

describe(`account members on ${databaseLabel()}`, () => {
  let t: TestServer;
  let owner: TestUser;
  let other: TestUser;
  let nodeId: string;
  let invitedCount = 0;

  const invite = (by: Pick<TestUser, 'token'>, body: unknown) => t.call('/api/account/invitations', { method: 'POST', token: by.token, body });
  const secretOf = (url: string) => url.split('#token=')[1]!;
  const accept = (token: string, password = PASSWORD) => t.call('/api/account/invitations/accept', { method: 'POST', body: { token, password } });
  /** A new member of the owner's account with `role`, and an API token of their own. */
  const join = async (role: string, by: Pick<TestUser, 'token'> = owner): Promise<Member> => {
    const email = `member${++invitedCount}-${Date.now()}@example.com`;
    const invited = await invite(by, { email, role });
    expect(invited.status, invited.text).toBe(201);
    const joined = await accept(secretOf(invited.json.invitationUrl));
    expect(joined.status, joined.text).toBe(201);
    await verifyFromOutbox(email);
    const token = await t.server.services.accounts.createToken(email, 'member');
    return { id: joined.json.userId, email, token: token.token, tokenId: token.id, role };
  };
  /** Opens the verification link a member who joined through a copied link was sent (no SMTP here: it waits in the outbox). */
  const verifyFromOutbox = async (email: string) => {
    const [message] = await t.server.db.query<{ text_body: string }>(`SELECT text_body FROM email_outbox WHERE recipient = $1 AND kind = 'verify-email'`, [email]);
    const token = message!.text_body.match(/#token=([A-Za-z0-9_-]{43})/)![1];
    const r = await t.call('/api/signup/verify', { method: 'POST', body: { token } });
    expect(r.status, r.text).toBe(200);
  };
  const signIn = async (email: string, password = PASSWORD) => {
    const r = await t.call('/api/session', { method: 'POST', body: { email, password } });
    expect(r.status, r.text).toBe(200);
    return { cookie: (r.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: r.json.csrfToken as string };
  };

  beforeAll(async () => {
    t = await startTestServer();
    owner = await t.createUser('scale');
    other = await t.createUser('scale');
    [nodeId] = await createNodes(t, owner, [{ name: 'shared' }]);
  });
  afterAll(() => t?.stop());

  describe('an invitation', () => {
    it('answers a one-time link to the web UI on the public URL; the list never shows its secret', async () => {
      const email = `Invited-${Date.now()}@Example.com`;
      const r = await invite(owner, { email, role: 'developer' });
      expect(r.status, r.text).toBe(201);
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.json).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        email: email.toLowerCase(),
        role: 'developer',
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
        // No SMTP_URL here: the inviter passes the link on (test/api/invitation-email.test.ts has both).
        emailed: false,
        invitationUrl: expect.stringMatching(new RegExp(`^${t.base}/invitation#token=[A-Za-z0-9_-]{43}$`)),
      });
      const days = (Date.parse(r.json.expiresAt) - Date.parse(r.json.createdAt)) / 86_400_000;
      expect(days).toBeCloseTo(7, 2);
      const list = await t.call('/api/account/invitations', { token: owner.token });
      expect(list.status).toBe(200);
      expect(list.json.invitations).toContainEqual({ id: r.json.id, email: email.toLowerCase(), role: 'developer', createdAt: r.json.createdAt, expiresAt: r.json.expiresAt });
      expect(list.text).not.toContain(secretOf(r.json.invitationUrl));
      // Only its hash is stored.
      const stored = await t.server.db.query<{ token_hash: string }>('SELECT token_hash FROM account_invitations WHERE id = $1', [r.json.id]);
      expect(stored[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(stored)).not.toContain(secretOf(r.json.invitationUrl));
    });

    it('is accepted once: the new user is a member of the account with its role, and signs in once their address is verified', async () => {
      const email = `once-${Date.now()}@example.com`;
      const invited = await invite(owner, { email, role: 'viewer' });
      const secret = secretOf(invited.json.invitationUrl);
      const joined = await accept(secret);
      expect(joined.status, joined.text).toBe(201);
      // A link passed on by hand proves nothing about the address (issue #45).
      expect(joined.json).toEqual({ userId: expect.stringMatching(/^[0-9a-f]{32}$/), email, accountId: owner.id, role: 'viewer', emailVerified: false });
      const again = await accept(secret, 'another-password');
      expect(again.status).toBe(404);
      expect(again.json.error.code).toBe('invitation_not_found');
      expect((await t.call('/api/account/invitations', { token: owner.token })).json.invitations.map((i: any) => i.id)).not.toContain(invited.json.id);
      const members = (await t.call('/api/account/members', { token: owner.token })).json.members;
      expect(members[0]).toEqual({ userId: owner.id, email: owner.email, role: 'owner', joinedAt: expect.any(String) });
      expect(members).toContainEqual({ userId: joined.json.userId, email, role: 'viewer', joinedAt: expect.any(String) });
      const unverified = await t.call('/api/session', { method: 'POST', body: { email, password: PASSWORD } });
      expect(unverified.status).toBe(403);
      expect(unverified.json.error.code).toBe('email_not_verified');
      await verifyFromOutbox(email);
      await signIn(email);
    });

    it('is refused once revoked, or expired, with the same 404 as an unknown link', async () => {
      const revoked = await invite(owner, { email: `revoked-${Date.now()}@example.com`, role: 'viewer' });
      const del = await t.call(`/api/account/invitations/${revoked.json.id}`, { method: 'DELETE', token: owner.token });
      expect(del.status).toBe(204);
      const expired = await invite(owner, { email: `expired-${Date.now()}@example.com`, role: 'viewer' });
      await t.server.db.query(`UPDATE account_invitations SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.json.id]);
      const unknown = await accept('A'.repeat(43));
      for (const r of [await accept(secretOf(revoked.json.invitationUrl)), await accept(secretOf(expired.json.invitationUrl)), unknown, await accept('short')]) {
        expect(r.status, r.text).toBe(404);
        expect(r.json.error).toEqual({ ...unknown.json.error, requestId: r.json.error.requestId });
      }
      const listed = (await t.call('/api/account/invitations', { token: owner.token })).json.invitations.map((i: any) => i.id);
      expect(listed).not.toContain(revoked.json.id);
      expect(listed).not.toContain(expired.json.id);
    });

    it('replaces an earlier invitation of the same email (its link stops working, its seat is freed)', async () => {
      const email = `twice-${Date.now()}@example.com`;
      const first = await invite(owner, { email, role: 'viewer' });
      const second = await invite(owner, { email, role: 'admin' });
      expect(second.status).toBe(201);
      const listed = (await t.call('/api/account/invitations', { token: owner.token })).json.invitations.filter((i: any) => i.email === email);
      expect(listed.map((i: any) => [i.id, i.role])).toEqual([[second.json.id, 'admin']]);
      expect((await accept(secretOf(first.json.invitationUrl))).status).toBe(404);
      expect((await accept(secretOf(second.json.invitationUrl))).json.role).toBe('admin');
    });

    it('is refused for an email that already has a user: a user belongs to one account', async () => {
      const r = await invite(owner, { email: other.email, role: 'viewer' });
      expect(r.status).toBe(409);
      expect(r.json.error.code).toBe('user_exists');
      expect(r.json.error.message).toContain('one account');
      // And at acceptance, when the user appeared after the invitation.
      const email = `late-${Date.now()}@example.com`;
      const invited = await invite(owner, { email, role: 'viewer' });
      await t.server.services.accounts.createUser({ email, plan: 'starter' });
      const late = await accept(secretOf(invited.json.invitationUrl));
      expect(late.status).toBe(409);
      expect(late.json.error.code).toBe('user_exists');
    });

    it('refuses bad input with 400 naming the field', async () => {
      const cases: Array<[unknown, string]> = [
        [{ email: 'not-an-email', role: 'viewer' }, 'email'],
        [{ email: 'x@example.com', role: 'owner' }, 'role'],
        [{ email: 'x@example.com', role: 'superuser' }, 'role'],
        [{ email: 'x@example.com' }, 'role'],
        [{ email: 'x@example.com', role: 'viewer', extra: 1 }, 'extra'],
      ];
      for (const [body, field] of cases) {
        const r = await invite(owner, body);
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.json.error.code).toBe('invalid_request');
        expect(JSON.stringify(r.json.error), JSON.stringify(body)).toContain(field);
      }
      const weak = await t.call('/api/account/invitations/accept', { method: 'POST', body: { token: 'A'.repeat(43), password: 'short' } });
      expect(weak.status).toBe(400);
      expect(weak.json.error.message).toContain('password');
    });
  });

  describe("the plan's user limit (members and pending invitations together)", () => {
    it('starter allows one user: the first invitation is refused, naming the limit', async () => {
      const starter = await t.createUser('starter');
      const r = await invite(starter, { email: `nope-${Date.now()}@example.com`, role: 'viewer' });
      expect(r.status).toBe(403);
      expect(r.json.error.code).toBe('plan_limit_reached');
      expect(r.json.error.details).toEqual({ limit: 'users', max: 1, used: 1, plan: 'starter' });
    });

    it('a plan of two users allows one invitation, refuses a second, and allows it again once the first is revoked', async () => {
      await t.server.db.query(`INSERT INTO plans (name, max_nodes, api_calls_per_month, max_users) VALUES ('duo', 1, 1000, 2) ON CONFLICT DO NOTHING`);
      const duo = await t.createUser('duo' as never);
      const first = await invite(duo, { email: `duo1-${Date.now()}@example.com`, role: 'viewer' });
      expect(first.status, first.text).toBe(201);
      const second = await invite(duo, { email: `duo2-${Date.now()}@example.com`, role: 'viewer' });
      expect(second.status).toBe(403);
      expect(second.json.error.details).toEqual({ limit: 'users', max: 2, used: 2, plan: 'duo' });
      expect((await t.call(`/api/account/invitations/${first.json.id}`, { method: 'DELETE', token: duo.token })).status).toBe(204);
      const third = await invite(duo, { email: `duo3-${Date.now()}@example.com`, role: 'viewer' });
      expect(third.status).toBe(201);
      // Accepted, it still takes the seat.
      expect((await accept(secretOf(third.json.invitationUrl))).status).toBe(201);
      expect((await invite(duo, { email: `duo4-${Date.now()}@example.com`, role: 'viewer' })).status).toBe(403);
    });
  });

  describe('at the same moment', () => {
    it('two invitations at the edge of the limit: exactly one is made (the account is locked while counting)', async () => {
      await t.server.db.query(`INSERT INTO plans (name, max_nodes, api_calls_per_month, max_users) VALUES ('duo', 1, 1000, 2) ON CONFLICT DO NOTHING`);
      const duo = await t.createUser('duo' as never);
      const both = await Promise.all([1, 2].map((i) => invite(duo, { email: `race${i}-${Date.now()}@example.com`, role: 'viewer' })));
      expect(both.map((r) => r.status).sort()).toEqual([201, 403]);
    });

    it('one link accepted twice at once: one member, one 404', async () => {
      const invited = await invite(owner, { email: `race-accept-${Date.now()}@example.com`, role: 'viewer' });
      const both = await Promise.all([accept(secretOf(invited.json.invitationUrl)), accept(secretOf(invited.json.invitationUrl), 'other-password')]);
      expect(both.map((r) => r.status).sort()).toEqual([201, 404]);
    });
  });

  describe('what each role may do', () => {
    let viewer: Member;
    let developer: Member;
    let admin: Member;

    beforeAll(async () => {
      [viewer, developer, admin] = [await join('viewer'), await join('developer'), await join('admin')];
    });

    it("a viewer sees the account's nodes at the same URLs, and may change nothing", async () => {
      const list = await t.call('/api/nodes', { token: viewer.token });
      expect(list.status).toBe(200);
      expect(list.json.nodes.map((n: any) => n.nodeId)).toContain(nodeId);
      const mine = await t.call(`/api/nodes/${nodeId}`, { token: owner.token });
      const theirs = await t.call(`/api/nodes/${nodeId}`, { token: viewer.token });
      expect(theirs.status).toBe(200);
      expect(theirs.json.data.invoke_url).toBe(mine.json.data.invoke_url);
      expect(theirs.json.data.invoke_url).toContain(`/${owner.id}/${nodeId}`);
      for (const [method, path, body] of [
        ['POST', '/api/nodes', { name: 'nope', network: 'regtest' }],
        ['POST', `/api/nodes/${nodeId}/stop`, undefined],
        ['POST', '/api/account/invitations', { email: 'v@example.com', role: 'viewer' }],
        ['DELETE', `/api/account/members/${developer.id}`, undefined],
      ] as const) {
        const r = await t.call(path, { method, token: viewer.token, body });
        expect(r.status, `${method} ${path}`).toBe(403);
        expect(r.json.error.code).toBe('forbidden_role');
      }
      expect((await t.call('/api/account/members', { token: viewer.token })).status).toBe(200);
    });

    it("a developer creates a node on the owner's account, and may not manage members", async () => {
      const created = await t.call('/api/nodes', { method: 'POST', token: developer.token, body: { name: 'by-developer', network: 'regtest' } });
      expect(created.status, created.text).toBe(200);
      const id = created.json.data.nodeId;
      expect((await t.call('/api/nodes', { token: owner.token })).json.nodes.map((n: any) => n.nodeId)).toContain(id);
      expect((await t.call(`/api/nodes/${id}`, { token: owner.token })).json.data.invoke_url).toContain(`/${owner.id}/${id}`);
      const r = await invite(developer, { email: 'd@example.com', role: 'viewer' });
      expect(r.status).toBe(403);
      expect(r.json.error.code).toBe('forbidden_role');
      await t.waitForStatus(owner, id, 'RUNNING');
      expect((await t.call('/api/nodes', { method: 'DELETE', token: developer.token, body: { destroyNodeId: id } })).status).toBe(200);
    });

    it("an admin invites and changes a member's role, effective on their next request, but never the owner's", async () => {
      const member = await join('viewer', admin);
      const cheapWrite = () => t.call(`/api/tokens/${'a'.repeat(32)}`, { method: 'DELETE', token: member.token });
      expect((await cheapWrite()).json.error.code).toBe('forbidden_role');
      const changed = await t.call(`/api/account/members/${member.id}`, { method: 'PATCH', token: admin.token, body: { role: 'developer' } });
      expect(changed.status, changed.text).toBe(200);
      expect(changed.json).toEqual({ userId: member.id, email: member.email, role: 'developer', joinedAt: expect.any(String) });
      // Now a developer: past the role check, on to "no such token".
      expect((await cheapWrite()).json.error.code).toBe('token_not_found');
      for (const [method, body] of [['PATCH', { role: 'viewer' }], ['DELETE', undefined]] as const) {
        const r = await t.call(`/api/account/members/${owner.id}`, { method, token: admin.token, body });
        expect(r.status, method).toBe(403);
        expect(r.json.error.code).toBe('forbidden');
      }
      const toOwner = await t.call(`/api/account/members/${member.id}`, { method: 'PATCH', token: owner.token, body: { role: 'owner' } });
      expect(toOwner.status).toBe(400);
      expect(toOwner.json.error.message).toContain('role');
      expect((await t.call(`/api/account/members/not-an-id`, { method: 'PATCH', token: owner.token, body: { role: 'viewer' } })).status).toBe(400);
    });

    it("another account's owner reaches none of this account's members or invitations (404 like missing ones)", async () => {
      const pending = await invite(owner, { email: `pending-${Date.now()}@example.com`, role: 'viewer' });
      const missing = 'f'.repeat(32);
      for (const [method, path, body, code] of [
        ['PATCH', `/api/account/members/${viewer.id}`, { role: 'admin' }, 'member_not_found'],
        ['DELETE', `/api/account/members/${viewer.id}`, undefined, 'member_not_found'],
        ['DELETE', `/api/account/invitations/${pending.json.id}`, undefined, 'invitation_not_found'],
      ] as const) {
        const foreign = await t.call(path, { method, token: other.token, body });
        const absent = await t.call(path.replace(/[0-9a-f]{32}$/, missing), { method, token: other.token, body });
        expect(foreign.status, `${method} ${path}`).toBe(404);
        expect(foreign.json.error.code).toBe(code);
        expect(foreign.json.error.message.replace(/[0-9a-f]{32}/, 'X')).toBe(absent.json.error.message.replace(/[0-9a-f]{32}/, 'X'));
      }
      expect((await t.call('/api/account/members', { token: other.token })).json.members).toEqual([
        { userId: other.id, email: other.email, role: 'owner', joinedAt: expect.any(String) },
      ]);
      expect((await t.call('/api/account/invitations', { token: other.token })).json.invitations).toEqual([]);
      // Nothing changed.
      expect((await t.call('/api/account/members', { token: owner.token })).json.members).toContainEqual(expect.objectContaining({ userId: viewer.id, role: 'viewer' }));
      expect((await t.call('/api/account/invitations', { token: owner.token })).json.invitations.map((i: any) => i.id)).toContain(pending.json.id);
      // And another account's node is still hidden from the owner's members.
      const [othersNode] = await createNodes(t, other, [{ name: 'elsewhere' }], { untilRunning: false });
      expect((await t.call(`/api/nodes/${othersNode}`, { token: admin.token })).status).toBe(404);
    });
  });

  describe('a removed member', () => {
    let member: Member;
    let session: { cookie: string; csrf: string };
    let cert: ClientCredentials & { serial: string };

    const viaBearer = (token: string) => rawRequest(t.config.nodeApiUrl, `/${owner.id}/${nodeId}`, { headers: { authorization: `Bearer ${token}` } });
    const viaMtls = (creds: ClientCredentials) => tlsRequest(t.config.userNodeUrl, `/nodes/${owner.id}/${nodeId}`, { ...creds, ca: creds.certificateChain });

    beforeAll(async () => {
      member = await join('developer');
      session = await signIn(member.email);
      const issued = await t.call(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: member.token });
      expect(issued.status, issued.text).toBe(200);
      cert = issued.json;
    });

    it("reaches the account's node through both gateways, with the node's URL under the account's id", async () => {
      const bearer = await viaBearer(member.token);
      expect(bearer.status, bearer.text).toBe(200);
      expect(bearer.json.nodeId).toBe(nodeId);
      expect((await viaMtls(cert)).json.nodeId).toBe(nodeId);
      expect(cert).toMatchObject({ nodeUrl: `${t.config.userNodeUrl}/nodes/${owner.id}/${nodeId}/` });
      const recorded = await t.server.db.query<{ issued_by: string }>('SELECT issued_by FROM client_certificates WHERE serial = $1', [cert.serial]);
      expect(recorded[0]!.issued_by).toBe(member.id);
      expect((await t.call('/api/nodes', { headers: { cookie: session.cookie } })).status).toBe(200);
      // An unlock attempt through the gateway names the member in the account's trail.
      await rawRequest(t.config.nodeApiUrl, `/${owner.id}/${nodeId}/unlock`, {
        method: 'POST',
        headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ password: 'not-the-password' }),
      });
      await expect
        .poll(async () => (await t.call('/api/audit-events', { token: owner.token })).json.events.find((e: any) => e.action === 'node.unlock'))
        .toMatchObject({ actor: 'gateway:bearer', actorUserId: member.id, actorEmail: member.email, target: nodeId });
    });

    it('loses their token, web session and certificate at once; the owner is never removed', async () => {
      const removed = await t.call(`/api/account/members/${member.id}`, { method: 'DELETE', token: owner.token });
      expect(removed.status, removed.text).toBe(204);
      const started = Date.now();
      const api = await t.call('/api/nodes', { token: member.token });
      expect(api.status).toBe(401);
      expect((await t.call('/api/nodes', { headers: { cookie: session.cookie } })).status).toBe(401);
      // The gateways forget the member at once in this process; another replica within its one second.
      let bearer = await viaBearer(member.token);
      while (bearer.status !== 401 && Date.now() - started < 1_500) bearer = await viaBearer(member.token);
      expect(bearer.status).toBe(401);
      expect(Date.now() - started).toBeLessThan(1_100);
      const mtls = await viaMtls(cert);
      expect(mtls.status).toBe(403);
      // Its record went with the member's user: no longer a certificate the service issued.
      expect(gatewayError(mtls).code).toBe('certificate_unknown');
      expect((await t.call('/api/account/members', { token: owner.token })).json.members.map((m: any) => m.userId)).not.toContain(member.id);
      // Their node work stays the account's; signing in again is refused.
      expect((await t.call('/api/session', { method: 'POST', body: { email: member.email, password: PASSWORD } })).status).toBe(401);
      const again = await t.call(`/api/account/members/${member.id}`, { method: 'DELETE', token: owner.token });
      expect(again.status).toBe(404);
      expect(again.json.error.code).toBe('member_not_found');
      const self = await t.call(`/api/account/members/${owner.id}`, { method: 'DELETE', token: owner.token });
      expect(self.status).toBe(403);
    });

    it("leaves an audit trail naming who did what, kept after the member's removal", async () => {
      // An event is recorded once its answer is sent: give the last one a moment.
      const trail = async () => (await t.call('/api/audit-events?limit=200', { token: owner.token })).json.events;
      let events = await trail();
      for (let i = 0; i < 20 && !events.some((e: any) => e.action === 'member.removed'); i++) events = await new Promise((r) => setTimeout(r, 100)).then(trail);
      expect(events.map((e: any) => [e.action, e.target, e.outcome, e.actorUserId, e.actorEmail])).toContainEqual(['member.removed', member.id, 'succeeded', owner.id, owner.email]);
      const joined = events.find((e: any) => e.action === 'member.joined' && e.actorUserId === member.id);
      expect(joined).toMatchObject({ actorEmail: member.email, actor: 'invitation', details: { role: 'developer' } });
      const issued = events.find((e: any) => e.action === 'certificate.issued' && e.actorUserId === member.id);
      expect(issued).toMatchObject({ actorEmail: member.email, target: nodeId });
      expect(events.some((e: any) => e.action === 'member.invited' && e.target === member.email && e.actorEmail === owner.email)).toBe(true);
      expect(events.some((e: any) => e.action === 'member.role_changed')).toBe(true);
      // Another account's trail has only its owner's refused attempts on this one.
      const others = (await t.call('/api/audit-events?limit=200', { token: other.token })).json.events.filter((e: any) => e.action.startsWith('member.'));
      expect(others.length).toBeGreaterThan(0);
      for (const e of others) expect(e).toMatchObject({ outcome: 'failed', actorUserId: other.id });
    });
  });
});
