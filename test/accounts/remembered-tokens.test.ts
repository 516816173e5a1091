// Tokens the API remembers on PGlite (accounts/remembered-tokens.ts): a remembered token is not
// read again, but a revocation in this process refuses it on the very next request, also when it
// overtakes a lookup under way; an entry never outlives the token's expiry; failures are never
// remembered; and with no time to remember (PostgreSQL), every call reads the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../../src/db/database.ts';
import { AccountService } from '../../src/accounts/service.ts';
import { RememberedTokens } from '../../src/accounts/remembered-tokens.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';

describe(`remembered API tokens on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  let lookups = 0;
  let accounts: AccountService;

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    // Counts the token lookups (the statements that read api_tokens by hash).
    const counted: Database = {
      ...db,
      query: <T,>(sql: string, params?: unknown[]) => {
        if (sql.includes('t.token_hash = $1')) lookups++;
        return db.query<T>(sql, params);
      },
      transaction: (fn: (tx: Queryable) => Promise<unknown>) => db.transaction(fn),
    } as Database;
    accounts = new AccountService(counted);
    await accounts.createUser({ email: 'remember@example.com', plan: 'starter' });
  });
  afterAll(() => close());

  it('reads a token once, then remembers it until it is revoked here', async () => {
    const tokens = new RememberedTokens(accounts, 60_000);
    const { token, id } = await accounts.createToken('remember@example.com', 'kept');
    lookups = 0;
    expect((await tokens.authenticate(token))?.tokenId).toBe(id);
    expect((await tokens.authenticate(token))?.tokenId).toBe(id);
    expect(lookups).toBe(1);
    await accounts.revokeToken(id);
    expect(await tokens.authenticate(token)).toBeUndefined();
    expect(await tokens.authenticate('rln_not-a-token')).toBeUndefined();
  });

  it('does not remember a lookup that a revocation overtook, nor a token past its expiry', async () => {
    const tokens = new RememberedTokens(accounts, 60_000);
    const { token, id } = await accounts.createToken('remember@example.com', 'overtaken');
    const lookup = tokens.authenticate(token);
    await accounts.revokeToken(id);
    await lookup;
    expect(await tokens.authenticate(token)).toBeUndefined();

    const expiring = await accounts.createToken('remember@example.com', 'expiring', 1);
    expect(await tokens.authenticate(expiring.token)).toBeDefined();
    await db.query(`UPDATE api_tokens SET expires_at = now() + interval '150 milliseconds' WHERE id = $1`, [expiring.id]);
    const soon = new RememberedTokens(accounts, 60_000);
    expect(await soon.authenticate(expiring.token)).toBeDefined();
    await new Promise((r) => setTimeout(r, 300));
    expect(await soon.authenticate(expiring.token)).toBeUndefined();
  });

  it('reads the database on every call when it may not remember (PostgreSQL)', async () => {
    const tokens = new RememberedTokens(accounts, 0);
    const { token } = await accounts.createToken('remember@example.com', 'fresh');
    lookups = 0;
    for (let i = 0; i < 3; i++) expect(await tokens.authenticate(token)).toBeDefined();
    expect(lookups).toBe(3);
  });
});
