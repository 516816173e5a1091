// Members of an account made directly in the database, for suites about what each role may do
// (test/api/members.test.ts goes through invitations, as users do).
import { randomBytes } from 'node:crypto';
import { insertUser } from '../../src/db/users.ts';
import { newId } from '../../src/auth/tokens.ts';
import type { Role } from '../../src/domain/roles.ts';
import type { TestServer, TestUser } from './server.ts';

/** A new user who is a member of `accountId` with `role`, and an API token of theirs. */
export async function addMember(t: TestServer, accountId: string, role: Exclude<Role, 'owner'>): Promise<TestUser> {
  const email = `${role}-${randomBytes(4).toString('hex')}@example.com`;
  const id = newId();
  await t.server.db.transaction(async (tx) => {
    await insertUser(tx, { id, email, passwordHash: null });
    await tx.query('INSERT INTO account_members (account_id, user_id, role) VALUES ($1, $2, $3)', [accountId, id, role]);
  });
  const token = await t.server.services.accounts.createToken(email, 'member');
  return { id, email, token: token.token, tokenId: token.id };
}
