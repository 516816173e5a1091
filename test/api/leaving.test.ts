// A member leaves their account over real HTTP (issue #45): their user goes, as with a removal (what
// ends, credential by credential: test/api/member-credentials.test.ts); the owner may not leave.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { addMember } from '../helpers/members.ts';

describe(`leaving an account on ${databaseLabel()}`, () => {
  let t: TestServer;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestServer();
    owner = await t.createUser('scale');
  });
  afterAll(() => t?.stop());

  const leave = (token: string, body: unknown = { confirm: true }) => t.call('/api/account/leave', { method: 'POST', token, body });
  const memberIds = async () => (await t.call('/api/account/members', { token: owner.token })).json.members.map((m: any) => m.userId);

  it('a viewer leaves: their user is gone, their token refused, the account and its owner unchanged', async () => {
    const viewer = await addMember(t, owner.id, 'viewer');
    const r = await leave(viewer.token);
    expect(r.status, r.text).toBe(204);
    expect(await memberIds()).toEqual([owner.id]);
    expect((await t.call('/api/nodes', { token: viewer.token })).status).toBe(401);
    expect((await t.call('/api/account', { token: owner.token })).json.id).toBe(owner.id);
    await expect
      .poll(async () => (await t.call('/api/audit-events', { token: owner.token })).json.events.find((e: any) => e.action === 'member.left'))
      .toMatchObject({ target: viewer.id, actorUserId: viewer.id, actorEmail: viewer.email, outcome: 'succeeded' });
    // The same email may be invited again: nothing of the old user holds it.
    expect((await t.call('/api/account/invitations', { method: 'POST', token: owner.token, body: { email: viewer.email, role: 'viewer' } })).status).toBe(201);
  });

  it('the owner may not leave: 403 forbidden naming the ways out, and nothing changes', async () => {
    const r = await leave(owner.token);
    expect(r.status).toBe(403);
    expect(r.json.error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('hand it to an admin first') });
    expect(await memberIds()).toContain(owner.id);
    expect((await t.call('/api/nodes', { token: owner.token })).status).toBe(200);
  });

  it('needs its confirmation: without it, 400 and the member stays', async () => {
    const admin = await addMember(t, owner.id, 'admin');
    const noBody = await t.call('/api/account/leave', { method: 'POST', token: admin.token });
    expect(noBody.status).toBe(400);
    for (const body of [{}, { confirm: false }, { confirm: 'yes' }, { confirm: true, extra: 1 }]) {
      const r = await leave(admin.token, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.code).toMatch(/^invalid_/);
    }
    expect(await memberIds()).toContain(admin.id);
  });
});
