// Handing an account to an admin over real HTTP (issue #45): the owner offers, the admin accepts,
// the two swap roles, and the account keeps its id (every node URL stays), even once the user whose
// id it carries has left. The hostile cases: a viewer offering or accepting, an offer to a
// non-admin or to another account's user, someone else accepting, a removed or demoted admin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { addMember } from '../helpers/members.ts';
import { createNodes } from '../helpers/tenants.ts';

describe(`ownership transfer on ${databaseLabel()}`, () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  const offer = (by: TestUser, userId: string) => t.call('/api/account/transfer', { method: 'POST', token: by.token, body: { userId } });
  const accept = (by: TestUser) => t.call('/api/account/transfer/accept', { method: 'POST', token: by.token });
  const rolesOf = async (token: string) =>
    Object.fromEntries((await t.call('/api/account/members', { token })).json.members.map((m: any) => [m.userId, m.role]));

  it('the owner offers, the admin accepts: roles swap, the account and its node URLs stay; the old owner can then leave', async () => {
    const owner = await t.createUser('scale');
    const [nodeId] = await createNodes(t, owner, [{ name: 'kept' }], { untilRunning: false });
    const admin = await addMember(t, owner.id, 'admin');
    const viewer = await addMember(t, owner.id, 'viewer');
    const before = (await t.call(`/api/nodes/${nodeId}`, { token: owner.token })).json.data;

    const offered = await offer(owner, admin.id);
    expect(offered.status, offered.text).toBe(201);
    expect(offered.json).toMatchObject({ toUserId: admin.id, toEmail: admin.email, offeredBy: owner.id, expiresAt: expect.any(String) });
    // Nothing changes until the admin says yes; every member sees the offer.
    expect(await rolesOf(owner.token)).toMatchObject({ [owner.id]: 'owner', [admin.id]: 'admin' });
    expect((await t.call('/api/account/transfer', { token: viewer.token })).json.toUserId).toBe(admin.id);

    const accepted = await accept(admin);
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.json).toEqual({ accountId: owner.id, previousOwner: owner.id });
    expect(await rolesOf(admin.token)).toMatchObject({ [owner.id]: 'admin', [admin.id]: 'owner', [viewer.id]: 'viewer' });
    expect((await t.call('/api/account', { token: admin.token })).json).toMatchObject({ id: owner.id, role: 'owner' });
    expect((await t.call('/api/account', { token: owner.token })).json).toMatchObject({ id: owner.id, role: 'admin' });
    expect((await t.call('/api/account/transfer', { token: admin.token })).status).toBe(404);
    // The previous owner's token now acts as an admin: owner routes refuse it.
    const asAdmin = await offer(owner, admin.id);
    expect(asAdmin.status).toBe(403);
    expect(asAdmin.json.error.code).toBe('forbidden_role');

    // The user whose id the account carries leaves: the account, its node and its URLs stay.
    expect((await t.call('/api/account/leave', { method: 'POST', token: owner.token, body: { confirm: true } })).status).toBe(204);
    const after = await t.call(`/api/nodes/${nodeId}`, { token: admin.token });
    expect(after.status, after.text).toBe(200);
    expect(before.invoke_url).toContain(`/${owner.id}/${nodeId}`);
    expect(after.json.data.invoke_url).toBe(before.invoke_url);
    expect((await t.call('/api/account', { token: admin.token })).json.id).toBe(owner.id);
    expect(Object.keys(await rolesOf(admin.token)).sort()).toEqual([admin.id, viewer.id].sort());
    // The new owner may hand it on, and another admin may take it.
    const next = await addMember(t, owner.id, 'admin');
    expect((await offer(admin, next.id)).status).toBe(201);
    expect((await accept(next)).status).toBe(200);
    expect((await rolesOf(next.token))[next.id]).toBe('owner');
  });

  it('refuses a viewer offering or accepting, an offer to a non-admin, to themselves, or to another account, and anyone else accepting', async () => {
    const owner = await t.createUser('scale');
    const admin = await addMember(t, owner.id, 'admin');
    const otherAdmin = await addMember(t, owner.id, 'admin');
    const developer = await addMember(t, owner.id, 'developer');
    const viewer = await addMember(t, owner.id, 'viewer');
    const stranger = await t.createUser('scale');
    const strangersAdmin = await addMember(t, stranger.id, 'admin');

    const byViewer = await offer(viewer, admin.id);
    expect(byViewer.status).toBe(403);
    expect(byViewer.json.error).toMatchObject({ code: 'forbidden_role', details: { role: 'viewer', leastRole: 'owner' } });
    const byAdmin = await offer(admin, otherAdmin.id);
    expect(byAdmin.json.error.code).toBe('forbidden_role');
    const toDeveloper = await offer(owner, developer.id);
    expect(toDeveloper.status).toBe(409);
    expect(toDeveloper.json.error).toMatchObject({ code: 'invalid_state', details: { role: 'developer' } });
    expect((await offer(owner, owner.id)).status).toBe(400);
    for (const outsider of [stranger.id, strangersAdmin.id, 'f'.repeat(32)]) {
      const r = await offer(owner, outsider);
      expect(r.status).toBe(404);
      expect(r.json.error).toMatchObject({ code: 'member_not_found', message: `member ${outsider} was not found` });
    }
    expect((await offer(owner, 'not an id')).status).toBe(400);
    expect((await t.call('/api/account/transfer', { token: owner.token })).status).toBe(404);

    expect((await offer(owner, admin.id)).status).toBe(201);
    const viewerAccepts = await accept(viewer);
    expect(viewerAccepts.json.error).toMatchObject({ code: 'forbidden_role', details: { role: 'viewer', leastRole: 'admin' } });
    for (const who of [otherAdmin, strangersAdmin]) {
      const r = await accept(who);
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('transfer_not_found');
    }
    // The other account was not touched either.
    expect((await rolesOf(stranger.token))[stranger.id]).toBe('owner');
    expect((await rolesOf(owner.token))[owner.id]).toBe('owner');

    // Withdrawn: the admin can no longer accept it.
    expect((await t.call('/api/account/transfer', { method: 'DELETE', token: owner.token })).status).toBe(204);
    expect((await accept(admin)).json.error.code).toBe('transfer_not_found');
    expect((await t.call('/api/account/transfer', { method: 'DELETE', token: owner.token })).status).toBe(404);
    expect((await rolesOf(owner.token))[owner.id]).toBe('owner');
  });

  it('an admin removed or demoted mid-transfer cannot accept; the offer goes with a removed one', async () => {
    const owner = await t.createUser('scale');
    const removed = await addMember(t, owner.id, 'admin');
    expect((await offer(owner, removed.id)).status).toBe(201);
    expect((await t.call(`/api/account/members/${removed.id}`, { method: 'DELETE', token: owner.token })).status).toBe(204);
    expect((await accept(removed)).status).toBe(401);
    expect((await t.call('/api/account/transfer', { token: owner.token })).status).toBe(404);

    const demoted = await addMember(t, owner.id, 'admin');
    expect((await offer(owner, demoted.id)).status).toBe(201);
    const changed = await t.call(`/api/account/members/${demoted.id}`, { method: 'PATCH', token: owner.token, body: { role: 'developer' } });
    expect(changed.status).toBe(200);
    expect((await accept(demoted)).json.error.code).toBe('forbidden_role');
    expect((await rolesOf(owner.token))[owner.id]).toBe('owner');
  });

  it('records the offer, the withdrawal and the transfer in the account’s audit trail', async () => {
    const owner = await t.createUser('scale');
    const admin = await addMember(t, owner.id, 'admin');
    await offer(owner, admin.id);
    await accept(admin);
    await expect
      .poll(async () => (await t.call('/api/audit-events', { token: admin.token })).json.events.map((e: any) => `${e.action} ${e.target} ${e.outcome}`))
      .toEqual(expect.arrayContaining([`account.transfer_offered ${admin.id} succeeded`, `account.transferred ${admin.id} succeeded`]));
  });
});
