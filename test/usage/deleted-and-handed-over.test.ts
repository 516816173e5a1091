// Usage of accounts that changed hands or were deleted (issue #45), through the service started as
// a user would start it: the operator's report names the current owner, not the account's creator,
// and a deleted account's month still closes from the records that stay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { addMember } from '../helpers/members.ts';
import { createNodes } from '../helpers/tenants.ts';
import { closeMonth } from '../../src/usage/close-month.ts';
import { monthOf } from '../../src/usage/node-time.ts';
import { purgeDeletedAccounts } from '../../src/db/account-deletion.ts';

describe(`usage of handed-over and deleted accounts on ${databaseLabel()}`, () => {
  let t: TestServer;

  beforeAll(async () => {
    // API calls are not written during the suite: a month must close from node time alone.
    t = await startTestServer({ USAGE_FLUSH_INTERVAL_MS: '60000', USAGE_FLUSH_BATCH: '1000000' });
  });
  afterAll(() => t?.stop());

  it("reports a handed-over account under its new owner's email, also once its creator has left", async () => {
    const creator = await t.createUser('scale');
    const admin = await addMember(t, creator.id, 'admin');
    await createNodes(t, creator, [{ name: 'metered' }]);
    expect((await t.call('/api/account/transfer', { method: 'POST', token: creator.token, body: { userId: admin.id } })).status).toBe(201);
    expect((await t.call('/api/account/transfer/accept', { method: 'POST', token: admin.token })).status).toBe(200);
    expect((await t.call('/api/account/leave', { method: 'POST', token: creator.token, body: { confirm: true } })).status).toBe(204);
    const { rows } = await t.server.services.usage.report(monthOf(new Date()));
    const mine = rows.filter((r) => r.accountId === creator.id);
    expect(mine.length).toBeGreaterThan(0);
    for (const r of mine) expect(r.ownerEmail).toBe(admin.email);
  });

  it("closes a deleted account's month from the records that stay", async () => {
    const owner = await t.createUser('scale');
    await t.server.services.accounts.setPassword(owner.email, 'owner password 1');
    const [nodeId] = await createNodes(t, owner, [{ name: 'short-lived' }]);
    await new Promise((r) => setTimeout(r, 1100));
    const r = await t.call('/api/account', { method: 'DELETE', token: owner.token, body: { password: 'owner password 1', destroyNodes: true } });
    expect([202, 204]).toContain(r.status);
    await expect.poll(async () => (await t.server.db.query<{ status: string }>('SELECT status FROM nodes WHERE id = $1', [nodeId]))[0]?.status, { timeout: 30_000 }).toBe('DESTROYED');
    await purgeDeletedAccounts(t.server.db);
    expect(await t.server.db.query('SELECT id FROM accounts WHERE id = $1', [owner.id])).toEqual([]);
    expect(await t.server.db.query('SELECT month FROM api_call_totals WHERE account_id = $1', [owner.id])).toEqual([]);
    expect(await closeMonth(t.server.db, monthOf(new Date()))).toBe(true);
    const closed = await t.server.db.query<{ running_seconds: number }>('SELECT running_seconds FROM usage_closed_months WHERE account_id = $1', [owner.id]);
    expect(closed.length).toBeGreaterThan(0);
    expect(Number(closed[0]!.running_seconds)).toBeGreaterThan(0);
  });
});
