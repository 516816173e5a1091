// Ends a member's open event streams within a second of their removal or role change (issue #36):
// a stream is one request that lasts for hours, so the check every request gets must be made again.
//
// In this process a removal or role change is told at once (AccountService.onMemberChanged) and
// the member's streams check their credential again right away. Another replica's change (a shared
// PostgreSQL) is found by one query a second over the members with open streams here: which of
// them are still members, with which role. Any difference has their streams check again. One
// indexed query a second per replica, whatever the number of streams, and none while no stream is
// open; cheaper and simpler than a LISTEN connection of its own per replica, which the repository
// does not have, and that PGlite (one process) does not need. The credential check itself
// (api/bearer-auth.ts stillAuthenticated) stays the one judge: the watch only says when to ask.
import type { AccountService } from '../accounts/service.ts';
import type { Database } from '../db/database.ts';
import { memberRolesOf } from '../db/accounts.ts';
import type { Role } from '../domain/roles.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';
import type { Logger } from '../logger.ts';

/** How often another replica's change is looked for: "within a second", like the gateways' ACCESS_CACHE_MS. */
export const MEMBER_WATCH_INTERVAL_MS = 1_000;

interface Watched {
  userId: string;
  /** The API token the stream was opened with; undefined for a web session. */
  tokenId: string | undefined;
  /** The role last seen: a difference in the database means the member changed elsewhere. */
  role: Role;
  /** Checks the stream's credential again and ends the stream if it no longer holds. */
  recheck: () => void;
}

export class MemberWatch {
  private readonly byUser = new Map<string, Set<Watched>>();
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly deps: { db: Database; accounts: Pick<AccountService, 'onMemberChanged' | 'onTokenRevoked'>; log: Logger; intervalMs?: number },
  ) {
    deps.accounts.onMemberChanged((userId) => this.recheck(userId));
    // A token revoked here ends its streams at once too (elsewhere: at the stream's periodic check).
    deps.accounts.onTokenRevoked((tokenId) => this.recheckToken(tokenId));
    this.loop = new BackgroundLoop({ name: 'member watch of event streams', run: () => this.lookAgain(), intervalMs: deps.intervalMs ?? MEMBER_WATCH_INTERVAL_MS, log: deps.log });
  }

  start() {
    this.loop.start();
  }

  stop() {
    return this.loop.stop();
  }

  /** Watches one stream of `userId` (with `role` now, opened with `tokenId`) until the returned function is called. */
  watch(userId: string, role: Role, tokenId: string | undefined, recheck: () => void): () => void {
    const entry: Watched = { userId, tokenId, role, recheck };
    let set = this.byUser.get(userId);
    if (!set) this.byUser.set(userId, (set = new Set()));
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.byUser.get(userId) === set) this.byUser.delete(userId);
    };
  }

  private recheck(userId: string) {
    for (const entry of this.byUser.get(userId) ?? []) entry.recheck();
  }

  private recheckToken(tokenId: string) {
    for (const entries of this.byUser.values()) for (const entry of entries) if (entry.tokenId === tokenId) entry.recheck();
  }

  private async lookAgain() {
    if (this.byUser.size === 0) return;
    const roles = await memberRolesOf(this.deps.db, [...this.byUser.keys()]);
    for (const [userId, entries] of this.byUser) {
      const role = roles.get(userId);
      for (const entry of entries) {
        if (role === entry.role) continue;
        // Still a member with another role: ask once, then compare with the new role.
        if (role !== undefined) entry.role = role;
        entry.recheck();
      }
    }
  }
}
