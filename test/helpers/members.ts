// Members of an account made directly in the database, for suites about what each role may do
// (test/api/members.test.ts goes through invitations, as users do), and a member holding every kind
// of credential at once, for the checks of what a removal or a demotion ends (security.ts).
import { randomBytes } from 'node:crypto';
import { insertUser } from '../../src/db/users.ts';
import { newId } from '../../src/auth/tokens.ts';
import type { Role } from '../../src/domain/roles.ts';
import type { TestServer, TestUser } from './server.ts';
import { AccountService } from '../../src/accounts/service.ts';
import { MemberService } from '../../src/accounts/members.ts';
import type { ClientCredentials } from '../gateway/gateway-client.ts';
import { SseClient } from '../events/sse-client.ts';

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

/** A member holding one credential of every kind at once, for the checks of what a removal or demotion ends. */
export interface CredentialedMember extends TestUser {
  /** A web session of theirs: the cookie, and the CSRF token its changes need. */
  session: { cookie: string; csrf: string };
  /** A client certificate they issued for the node under test. */
  certificate: ClientCredentials & { serial: string };
  /** Their open event streams, one with their token and one with their session. */
  streams: { token: SseClient; session: SseClient };
  /** An invitation they made (as an admin), not yet accepted: its id and the link's secret. */
  invitation: { id: string; secret: string };
}

const MEMBER_PASSWORD = 'member-password-1';

/**
 * A new admin of `owner`'s account with a token, a web session, a certificate for `nodeId`, two
 * open event streams and a pending invitation of their own, each made over HTTP as a client would.
 */
export async function memberWithEveryCredential(t: TestServer, owner: TestUser, nodeId: string): Promise<CredentialedMember> {
  const member = await addMember(t, owner.id, 'admin');
  await t.server.services.accounts.setPassword(member.email, MEMBER_PASSWORD);
  const signedIn = await t.call('/api/session', { method: 'POST', body: { email: member.email, password: MEMBER_PASSWORD } });
  if (signedIn.status !== 200) throw new Error(`sign-in answered ${signedIn.status}: ${signedIn.text}`);
  const session = { cookie: (signedIn.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: signedIn.json.csrfToken as string };
  const issued = await t.call(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: member.token });
  if (issued.status !== 200) throw new Error(`generate-cert answered ${issued.status}: ${issued.text}`);
  const invited = await t.call('/api/account/invitations', { method: 'POST', token: member.token, body: { email: `invited-by-${member.id}@example.com`, role: 'admin' } });
  if (invited.status !== 201) throw new Error(`inviting answered ${invited.status}: ${invited.text}`);
  const streams = {
    token: await SseClient.open(t.base, '/api/events/stream', { token: member.token }),
    session: await SseClient.open(t.base, '/api/events/stream', { headers: { cookie: session.cookie } }),
  };
  for (const s of Object.values(streams)) if (s.status !== 200) throw new Error(`the event stream answered ${s.status}`);
  return {
    ...member,
    session,
    certificate: issued.json,
    streams,
    invitation: { id: invited.json.id, secret: String(invited.json.invitationUrl).split('#token=')[1]! },
  };
}

/**
 * The member service of another replica on the same database: its changes are committed like this
 * process's, but nothing here is told of them (AccountService.memberChanged), as with a shared
 * PostgreSQL; what this process remembers must find out by itself.
 */
export function anotherReplicasMembers(t: TestServer): MemberService {
  return new MemberService({ db: t.server.db, accounts: new AccountService(t.server.db), publicUrl: t.config.publicUrl });
}
