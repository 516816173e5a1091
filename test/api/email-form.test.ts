// One form of an email address everywhere (issue #37): NFC, lowercased. An address written with a
// precomposed "é" and one written "e" + U+0301, in any case, are one address: one invitation and
// one seat, one user to sign in as and to name in the operator's commands; migration 0027 brings
// stored rows to that form, a later duplicate of a user kept as it was.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseLabel, insertOwnerUser, openMigratedTestDb } from '../helpers/database.ts';
import { listMigrations, migrate } from '../../src/db/migrate.ts';

const PRECOMPOSED = 'jos\u00e9@example.com';
const COMBINING = 'JOSE\u0301@EXAMPLE.COM';

describe(`email addresses in one form, on ${databaseLabel()}`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  it('a second invitation of the same address written otherwise replaces the first: one seat', async () => {
    const owner = await t.createUser();
    const invite = (email: string) => t.call('/api/account/invitations', { method: 'POST', token: owner.token, body: { email, role: 'viewer' } });
    expect((await invite(PRECOMPOSED)).status).toBe(201);
    const second = await invite(COMBINING);
    expect(second.status, second.text).toBe(201);
    expect(second.json.email).toBe(PRECOMPOSED);
    const pending = (await t.call('/api/account/invitations', { token: owner.token })).json.invitations;
    expect(pending.map((i: { email: string }) => i.email)).toEqual([PRECOMPOSED]);
    expect((await t.call('/api/account', { token: owner.token })).json.usage.users.pendingInvitations).toBe(1);
  });

  it('a user made with one spelling signs in, and is named, with the other', async () => {
    const user = await t.createUser(undefined, 'ren\u00c9e@example.com'.replace('\u00c9', 'E\u0301'));
    expect((await t.server.db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [user.id]))[0]!.email).toBe('ren\u00e9e@example.com');
    await t.server.services.accounts.setPassword('REN\u00c9E@example.com', 'a-long-password-1');
    const r = await t.call('/api/session', { method: 'POST', body: { email: 'Rene\u0301e@Example.com', password: 'a-long-password-1' } });
    expect(r.status, r.text).toBe(200);
    expect(await t.server.services.accounts.userIdOf('ren\u00e9e@EXAMPLE.com')).toBe(user.id);
    // An address that is another's in this form is that user.
    const again = await t.call('/api/account/invitations', { method: 'POST', token: (await t.createUser()).token, body: { email: 'RENE\u0301E@example.com', role: 'viewer' } });
    expect(again.json.error?.code).toBe('user_exists');
  });
});

describe(`migration 0027 brings stored addresses to the form, on ${databaseLabel()}`, () => {
  let db: Awaited<ReturnType<typeof openMigratedTestDb>> | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it('normalises users (of a collision, the one already in the form keeps it) and revokes all but the newest pending invitation of one address', async () => {
    db = await openMigratedTestDb(26);
    const nfd = (s: string) => s.normalize('NFD');
    // Two users whose addresses become one: the one already in the form keeps it.
    await insertOwnerUser(db.db, 'u-nfd', nfd('zoé@example.com'));
    await insertOwnerUser(db.db, 'u-nfc', 'zoé@example.com'.normalize('NFC'));
    await insertOwnerUser(db.db, 'u-alone', nfd('chloé@example.com'));
    for (const [id, email, age] of [['i-1', nfd('léa@example.com'), '2 hours'], ['i-2', 'léa@example.com', '1 hour']] as const) {
      await db.db.query(
        `INSERT INTO account_invitations (id, account_id, email, role, token_hash, expires_at, created_at)
         VALUES ($1, 'u-alone', $2, 'viewer', $1, now() + interval '1 day', now() - $3::interval)`,
        [id, email, age],
      );
    }
    await migrate(db.db, listMigrations());
    const users = Object.fromEntries((await db.db.query<{ id: string; email: string }>('SELECT id, email FROM users')).map((u) => [u.id, u.email]));
    expect(users['u-alone']).toBe('chloé@example.com'.normalize('NFC'));
    expect(users['u-nfc']).toBe('zoé@example.com'.normalize('NFC'));
    expect(users['u-nfd']).toBe(nfd('zoé@example.com'));
    const invitations = await db.db.query<{ id: string; email: string; revoked: boolean }>('SELECT id, email, revoked_at IS NOT NULL AS revoked FROM account_invitations ORDER BY id');
    expect(invitations).toEqual([
      { id: 'i-1', email: 'léa@example.com'.normalize('NFC'), revoked: true },
      { id: 'i-2', email: 'léa@example.com'.normalize('NFC'), revoked: false },
    ]);
  });
});
