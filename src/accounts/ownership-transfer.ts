// Handing an account to another member (issue #45): the owner offers it to one of its admins, the
// admin accepts, and the two swap roles (the old owner stays, as an admin). Confirmed by both: the
// offer is the owner's word, the accept the admin's. The account keeps its id, which is the id of
// the user who created it, so every node URL stays as it is.
import type { Database, Queryable } from '../db/database.ts';
import { findAccountMember, lockAccount } from '../db/accounts.ts';
import { deleteTransfer, findLiveTransfer, swapOwner, upsertTransfer, type TransferRow } from '../db/account-transfers.ts';
import { AppError } from '../errors.ts';
import type { AccountService, AuthenticatedUser } from './service.ts';

/** How long an offer waits for its admin. */
export const TRANSFER_TTL_MS = 7 * 86_400_000;

export interface TransferView {
  toUserId: string;
  toEmail: string;
  offeredBy: string;
  createdAt: string;
  expiresAt: string;
}

export class OwnershipTransfers {
  constructor(private readonly deps: { db: Database; accounts: Pick<AccountService, 'memberChanged'> }) {}

  /** The owner offers the account to an admin (404 member_not_found for anyone not in it, 409 invalid_state for a member below admin). */
  async offer(owner: AuthenticatedUser, toUserId: string): Promise<TransferView> {
    return this.deps.db.transaction(async (tx) => {
      await this.lockAs(tx, owner, 'owner');
      if (toUserId === owner.id) throw new AppError('invalid_request', 'you already own this account; name an admin to hand it to', { field: 'userId' });
      const to = await findAccountMember(tx, owner.accountId, toUserId);
      if (!to) throw new AppError('member_not_found', `member ${toUserId} was not found`);
      if (to.role !== 'admin') {
        throw new AppError('invalid_state', `the account can only be handed to an admin; ${to.email} is a ${to.role}: make them an admin first`, { role: to.role });
      }
      await upsertTransfer(tx, { accountId: owner.accountId, toUserId, offeredBy: owner.id, expiresAt: new Date(Date.now() + TRANSFER_TTL_MS) });
      return present((await findLiveTransfer(tx, owner.accountId))!);
    });
  }

  async current(accountId: string): Promise<TransferView> {
    const row = await findLiveTransfer(this.deps.db, accountId);
    if (!row) throw noTransfer();
    return present(row);
  }

  async withdraw(owner: AuthenticatedUser): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      await this.lockAs(tx, owner, 'owner');
      if (!(await deleteTransfer(tx, owner.accountId))) throw noTransfer();
    });
  }

  /**
   * The admin the account was offered to accepts it. Anyone else, an offer that expired or was
   * withdrawn, an admin demoted since, or an offer whose maker is no longer the owner: 404, as if
   * there were none.
   */
  async accept(admin: AuthenticatedUser): Promise<{ accountId: string; previousOwner: string }> {
    const previousOwner = await this.deps.db.transaction(async (tx) => {
      await this.lockAs(tx, admin, 'admin');
      const offer = await findLiveTransfer(tx, admin.accountId);
      if (!offer || offer.to_user_id !== admin.id) throw noTransfer();
      const maker = await findAccountMember(tx, admin.accountId, offer.offered_by);
      if (maker?.role !== 'owner') throw noTransfer();
      await swapOwner(tx, admin.accountId, offer.offered_by, admin.id);
      await deleteTransfer(tx, admin.accountId);
      return offer.offered_by;
    });
    // Both roles changed: what their credentials remembered, and their open streams, look again.
    this.deps.accounts.memberChanged(previousOwner);
    this.deps.accounts.memberChanged(admin.id);
    return { accountId: admin.accountId, previousOwner };
  }

  /** Takes the account's lock and checks the caller's role as it is now (not as their credential remembered it). */
  private async lockAs(tx: Queryable, caller: AuthenticatedUser, role: 'owner' | 'admin') {
    if (!(await lockAccount(tx, caller.accountId))) throw new AppError('unauthorized', 'your account no longer exists');
    const self = await findAccountMember(tx, caller.accountId, caller.id);
    if (!self) throw new AppError('unauthorized', 'you are no longer a member of this account');
    if (self.role !== role) {
      if (role === 'admin') throw noTransfer();
      throw new AppError('forbidden_role', `your role in this account is ${self.role}; this needs ${role}`, { role: self.role, leastRole: role });
    }
  }
}

const noTransfer = () => new AppError('transfer_not_found', 'no offer of this account is pending for you: none was made, or it was withdrawn, accepted or has expired');

const present = (t: TransferRow): TransferView => ({
  toUserId: t.to_user_id,
  toEmail: t.to_email,
  offeredBy: t.offered_by,
  createdAt: t.created_at.toISOString(),
  expiresAt: t.expires_at.toISOString(),
});
