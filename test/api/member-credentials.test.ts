// What a member's demotion or removal ends (issue #36, points 2, 3 and 5), over real HTTP with one
// credential of every kind open at once: an API token, a web session, a client certificate through
// the mutual-TLS gateway, event streams and an invitation the member made. The event streams keep
// the default heartbeat (15 s): their minute-long recheck must not be what ends them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes } from '../helpers/tenants.ts';
import { itEndsAChangedMembersCredentials } from '../helpers/security.ts';
import { addMember, anotherReplicasMembers } from '../helpers/members.ts';
import { SseClient } from '../events/sse-client.ts';

describe(`a member's demotion or removal, with open credentials of every kind, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let owner: TestUser;
  let nodeId: string;

  beforeAll(async () => {
    t = await startTestServer();
    owner = await t.createUser();
    [nodeId] = await createNodes(t, owner, [{ name: 'shared' }]);
  }, 120_000);
  afterAll(() => t?.stop());

  itEndsAChangedMembersCredentials(() => ({ t, owner, nodeId }));

  it('ends the event streams of a token revoked through the API at once, not at their next periodic check', async () => {
    const made = await t.call('/api/tokens', { method: 'POST', token: owner.token, body: { name: 'streaming' } });
    expect(made.status, made.text).toBe(200);
    const revoked = await SseClient.open(t.base, '/api/events/stream', { token: made.json.data.token });
    const kept = await SseClient.open(t.base, '/api/events/stream', { token: owner.token });
    expect((await t.call(`/api/tokens/${made.json.data.id}`, { method: 'DELETE', token: owner.token })).status).toBeLessThan(300);
    // The default heartbeat is 15 s and the periodic check every fourth one: 5 s is far inside it.
    const done = await Promise.race([revoked.ended.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000))]);
    expect(done, 'the revoked token\'s stream is still open').toBe(true);
    const stillOpen = await Promise.race([kept.ended.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 200))]);
    expect(stillOpen, "another token's stream ended too").toBe(true);
    kept.close();
  });

  describe('the invitations a member made', () => {
    const invite = (by: Pick<TestUser, 'token'>, email: string) =>
      t.call('/api/account/invitations', { method: 'POST', token: by.token, body: { email, role: 'developer' } });

    it("are revoked when their maker is demoted below admin; another member's stay", async () => {
      const admin = await addMember(t, owner.id, 'admin');
      const kept = await invite(admin, `kept-${Date.now()}@example.com`);
      expect(kept.status, kept.text).toBe(201);
      // Another admin's and the owner's invitations are not the demoted member's: they stay.
      const owners = await invite(owner, `owners-${Date.now()}@example.com`);
      const toDeveloper = await t.call(`/api/account/members/${admin.id}`, { method: 'PATCH', token: owner.token, body: { role: 'developer' } });
      expect(toDeveloper.status, toDeveloper.text).toBe(200);
      const pending = (await t.call('/api/account/invitations', { token: owner.token })).json.invitations.map((i: any) => i.id);
      expect(pending).toContain(owners.json.id);
      expect(pending).not.toContain(kept.json.id);
      // The pending list keeps its shape: no revokedAt there.
      for (const i of (await t.call('/api/account/invitations', { token: owner.token })).json.invitations) expect(Object.keys(i).sort()).toEqual(['createdAt', 'email', 'expiresAt', 'id', 'role']);
    });

    it("die with the removal of the admin who made them: the link answers 404, the list shows them revoked", async () => {
      const admin = await addMember(t, owner.id, 'admin');
      const made = await invite(admin, `orphan-${Date.now()}@example.com`);
      expect(made.status, made.text).toBe(201);
      expect((await t.call(`/api/account/members/${admin.id}`, { method: 'DELETE', token: owner.token })).status).toBe(204);
      const accepted = await t.call('/api/account/invitations/accept', { method: 'POST', body: { token: made.json.invitationUrl.split('#token=')[1], password: 'invited-password-1' } });
      expect(accepted.status, accepted.text).toBe(404);
      expect(accepted.json.error.code).toBe('invitation_not_found');
      const revoked = (await t.call('/api/account/invitations?status=revoked', { token: owner.token })).json.invitations;
      expect(revoked).toContainEqual({ id: made.json.id, email: made.json.email, role: 'developer', createdAt: made.json.createdAt, expiresAt: made.json.expiresAt, revokedAt: expect.any(String) });
    });

    it("cannot be made by a member another replica just demoted, even while their token's admin role is remembered here", async () => {
      const admin = await addMember(t, owner.id, 'admin');
      // Their token is now checked (and, on PGlite, remembered for a second) with the admin role.
      expect((await t.call('/api/account/invitations', { token: admin.token })).status).toBe(200);
      await anotherReplicasMembers(t).changeRole(owner.id, admin.id, 'viewer');
      const email = `late-${Date.now()}@example.com`;
      const r = await invite(admin, email);
      expect(r.status, r.text).toBe(403);
      expect(r.json.error.code).toBe('forbidden_role');
      expect((await t.call('/api/account/invitations', { token: owner.token })).json.invitations.map((i: any) => i.email)).not.toContain(email);
    });

    it('?status takes pending or revoked only (400 naming the field)', async () => {
      const r = await t.call('/api/account/invitations?status=accepted', { token: owner.token });
      expect(r.status, r.text).toBe(400);
      expect(r.json.error.code).toBe('invalid_request');
      expect(r.text).toContain('status');
      expect((await t.call('/api/account/invitations?status=pending', { token: owner.token })).status).toBe(200);
    });
  });
});
