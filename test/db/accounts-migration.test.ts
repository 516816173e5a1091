// Migration 0020 on a database that already had users: each becomes the owner of an account whose
// id is their user id, on the plan they had, and what they held keeps working unchanged: their
// token authenticates (as the owner), and the node URL `<user_id>/<node_id>` still resolves to
// their node through the gateways' lookup. Then a member removed from such an account.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountService } from '../../src/accounts/service.ts';
import { MemberService } from '../../src/accounts/members.ts';
import { NodeAccess } from '../../src/gateway/node-access.ts';
import { listMigrations, migrate } from '../../src/db/migrate.ts';
import { generateToken, hashToken, newId } from '../../src/auth/tokens.ts';
import type { Database } from '../../src/db/database.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';

describe(`accounts made from the users of a database before 0020, on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  const userId = newId();
  const nodeId = newId();
  const token = generateToken();

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb(19));
    await db.query(`INSERT INTO users (id, email, plan) VALUES ($1, 'before@example.com', 'growth')`, [userId]);
    await db.query(`INSERT INTO api_tokens (id, user_id, name, token_hash) VALUES ($1, $2, 'old', $3)`, [newId(), userId, hashToken(token)]);
    await db.query(`INSERT INTO image_versions (version) VALUES ('v0.1.0') ON CONFLICT DO NOTHING`);
    await db.query(
      `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version, rest_port, peer_port)
       VALUES ($1, $2, 'old-node', 'regtest', 'PAUSED', 'stopped', 'v0.1.0', 40001, 40002)`,
      [nodeId, userId],
    );
    await migrate(db, listMigrations());
  });
  afterAll(() => close?.());

  it('makes the user the owner of an account with their id, on the plan they had', async () => {
    expect(await db.query('SELECT id, plan FROM accounts')).toEqual([{ id: userId, plan: 'growth' }]);
    expect(await db.query('SELECT account_id, user_id, role FROM account_members')).toEqual([{ account_id: userId, user_id: userId, role: 'owner' }]);
  });

  it("keeps the user's token working, now as the account's owner", async () => {
    const user = await new AccountService(db).authenticate(token);
    expect(user).toMatchObject({ id: userId, accountId: userId, role: 'owner', plan: 'growth', email: 'before@example.com' });
  });

  it('keeps the node URL <user_id>/<node_id>: the gateway finds the node under the account, whose id is the user id', async () => {
    const accounts = new AccountService(db);
    const access = new NodeAccess({ db, accounts });
    const user = await access.authenticate(`Bearer ${token}`);
    const node = await access.ownedNode(user, userId, nodeId);
    expect(node).toMatchObject({ id: nodeId, name: 'old-node' });
  });

  it('lets the owner invite a member into the migrated account, whose removal ends their token', async () => {
    const accounts = new AccountService(db);
    const members = new MemberService({ db, accounts, publicUrl: 'http://service.test' });
    const owner = (await accounts.authenticate(token))!;
    // growth allows one user: the owner alone.
    await expect(members.invite(owner, { email: 'second@example.com', role: 'viewer' })).rejects.toMatchObject({
      code: 'plan_limit_reached',
      details: { limit: 'users', max: 1, used: 1, plan: 'growth' },
    });
    await db.query(`UPDATE accounts SET plan = 'scale' WHERE id = $1`, [userId]);
    const invited = await members.invite({ ...owner, plan: 'scale' }, { email: 'second@example.com', role: 'viewer' });
    expect(invited.invitationUrl).toMatch(/^http:\/\/service\.test\/invitation#token=[A-Za-z0-9_-]{43}$/);
    const joined = await members.accept({ token: invited.invitationUrl!.split('#token=')[1]!, password: 'a-good-password' }, '127.0.0.1');
    expect(joined).toMatchObject({ accountId: userId, role: 'viewer', email: 'second@example.com' });
    const memberToken = (await accounts.createToken('second@example.com', 'm')).token;
    expect(await accounts.authenticate(memberToken)).toMatchObject({ id: joined.userId, accountId: userId, role: 'viewer' });
    await members.removeMember(userId, joined.userId);
    expect(await accounts.authenticate(memberToken)).toBeUndefined();
    expect(await accounts.authenticate(token)).toMatchObject({ id: userId, role: 'owner' });
  });
});
