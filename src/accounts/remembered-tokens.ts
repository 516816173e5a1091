// Bearer tokens the management API has just checked, remembered for a moment, but only where that
// changes no answer: when this process is the database's only one (embedded PGlite; the operator
// CLI then reaches the service through its admin channel). Every revocation then goes through
// AccountService.revokeToken in this process, which drops the token here at once; every role
// change or removal of a member goes through accounts/members.ts, which drops the member's tokens
// at once (AccountService.memberChanged); an entry never outlives the token's expiry; and nothing
// else changes what a token lookup answers but a plan change, the operator's, which shows within
// REMEMBER_TOKENS_MS. With PostgreSQL
// another replica or the CLI may revoke a token, and the API refuses it on the very next request
// (test/kubernetes/replicas.test.ts), so there every request reads the token afresh.
//
// Why: on PGlite each statement costs a turn of its one session, and the token lookup was half of
// the statements of a GET /api/nodes.
import type { AccountService, AuthenticatedUser } from './service.ts';

const MAX_ENTRIES = 10_000;
/** How long the API remembers a token on PGlite: short, so last_used_at stays as fresh as before. */
export const REMEMBER_TOKENS_MS = 1_000;

export class RememberedTokens {
  private readonly entries = new Map<string, { user: AuthenticatedUser; until: number }>();
  // Counts revocations: a lookup that a revocation overtook is not remembered (it may have read
  // the token just before the revocation was written).
  private revocations = 0;

  /** `ttlMs` 0: nothing is remembered (every call reads the database). */
  constructor(
    private readonly accounts: AccountService,
    private readonly ttlMs: number,
  ) {
    if (ttlMs > 0) {
      accounts.onTokenRevoked((tokenId) => this.forget((user) => user.tokenId === tokenId));
      accounts.onMemberChanged((userId) => this.forget((user) => user.id === userId));
    }
  }

  /** The token's user, or undefined for a missing, revoked or expired token (never remembered). */
  async authenticate(token: string): Promise<AuthenticatedUser | undefined> {
    if (this.ttlMs <= 0) return this.accounts.authenticate(token);
    const hit = this.entries.get(token);
    if (hit && hit.until > Date.now()) return hit.user;
    this.entries.delete(token);
    const revocationsBefore = this.revocations;
    const found = await this.accounts.authenticateUntil(token);
    if (!found || this.revocations !== revocationsBefore) return found?.user;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    const until = Math.min(Date.now() + this.ttlMs, found.expiresAt?.getTime() ?? Infinity);
    this.entries.set(token, { user: found.user, until });
    return found.user;
  }

  private forget(test: (user: AuthenticatedUser) => boolean) {
    this.revocations++;
    for (const [token, entry] of this.entries) if (test(entry.user)) this.entries.delete(token);
  }
}
