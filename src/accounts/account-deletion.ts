// The owner deletes their account (issue #45), confirming with their password, or, for an owner
// without one (who signs in with an OpenID provider or a passkey), with a current second factor
// (issue #38). Live nodes stop it
// unless the owner also confirms their destruction (destroyNodes): then each is destroyed first.
// The account's people and their personal data go at once (db/account-deletion.ts says what);
// while nodes are still being destroyed the account's row waits for them (reconcile's
// housekeeping removes it), so no runtime is left running without a record.
import type { Database } from '../db/database.ts';
import { findAccountMember, lockAccount } from '../db/accounts.ts';
import { findUserById } from '../db/users.ts';
import { countSignInFailures, clearSignInFailures, recordSignInFailure } from '../db/web-sessions.ts';
import { deleteAccountPeople, deleteAccountRow, listLiveNodeIds, listUndestroyedNodeIds, markAccountDeleted } from '../db/account-deletion.ts';
import { verifyPassword } from '../auth/passwords.ts';
import { AppError } from '../errors.ts';
import type { AccountService, AuthenticatedUser } from './service.ts';
import type { FactorInput, FactorSource, TwoFactor } from './two-factor.ts';

/** How the owner confirms: their password, or (without one) a factor: a code, a recovery code or a passkey's answer. */
export interface DeletionSource extends FactorSource {
  /** The request's web session signed in through an OpenID provider minutes ago. */
  freshProviderSignIn?: boolean;
}

export interface DeletionConfirmation extends FactorInput {
  password?: string;
  destroyNodes?: boolean;
}

// Wrong passwords are limited like sign-ins, per owner: a stolen session must not guess its way to a deletion.
const FAILURE_WINDOW_S = 15 * 60;
const MAX_FAILURES = 5;

export interface AccountDeleted {
  /** `deleted`: gone now; `deleting`: its people are gone, its row follows once these nodes are destroyed. */
  status: 'deleted' | 'deleting';
  destroyingNodeIds: string[];
}

export class AccountDeletion {
  constructor(
    private readonly deps: {
      db: Database;
      nodes: { destroyNode(accountId: string, nodeId: string): Promise<void> };
      accounts: Pick<AccountService, 'memberChanged'>;
      /** Confirms the deletion of an owner without a password; absent: such an owner cannot delete. */
      twoFactor?: Pick<TwoFactor, 'hasFactor' | 'check'>;
    },
  ) {}

  async deleteAccount(owner: AuthenticatedUser, input: DeletionConfirmation, from: DeletionSource = { sourceIp: '' }): Promise<AccountDeleted> {
    const { db } = this.deps;
    const key = `delete-account:${owner.id}`;
    const { failures, retryAfterSeconds } = await countSignInFailures(db, key, FAILURE_WINDOW_S);
    if (failures >= MAX_FAILURES) {
      throw new AppError('rate_limited', `too many wrong passwords; try again in ${Math.ceil(retryAfterSeconds / 60)} minute(s)`, { retryAfterSeconds });
    }
    const user = await findUserById(db, owner.id);
    if (!user) throw new AppError('unauthorized', 'you are no longer a member of this account');
    if (!user.password_hash) {
      await this.confirmWithFactor(owner, input, from);
    } else if (input.password === undefined) {
      throw new AppError('invalid_request', 'send {"password": "..."} to confirm the deletion', { field: 'password' });
    } else if (!(await verifyPassword(input.password, user.password_hash))) {
      await recordSignInFailure(db, key, FAILURE_WINDOW_S);
      throw new AppError('wrong_password', 'the password is wrong; the account was not deleted');
    }
    if (user.password_hash) await clearSignInFailures(db, key);
    const live = await listLiveNodeIds(db, owner.accountId);
    if (live.length > 0 && input.destroyNodes !== true) throw liveNodes(live);
    for (const nodeId of live) {
      try {
        await this.deps.nodes.destroyNode(owner.accountId, nodeId);
      } catch (err) {
        // Destroyed meanwhile by someone else: that is what was asked.
        if (!(err instanceof AppError && err.code === 'node_destroyed')) throw err;
      }
    }
    const { deletedUsers, destroying } = await db.transaction(async (tx) => {
      await lockAccount(tx, owner.accountId);
      const self = await findAccountMember(tx, owner.accountId, owner.id);
      if (self?.role !== 'owner') throw new AppError('forbidden_role', `your role in this account is ${self?.role ?? 'none'}; deleting it needs owner`, { role: self?.role ?? null, leastRole: 'owner' });
      // A node another member created after the look above: not one the owner agreed to lose.
      const created = await listLiveNodeIds(tx, owner.accountId);
      if (created.length > 0) throw liveNodes(created);
      const deletedUsers = await deleteAccountPeople(tx, owner.accountId);
      const destroying = await listUndestroyedNodeIds(tx, owner.accountId);
      if (destroying.length === 0) await deleteAccountRow(tx, owner.accountId);
      else await markAccountDeleted(tx, owner.accountId);
      return { deletedUsers, destroying };
    });
    // Their remembered tokens and certificates, and their open event streams, end now.
    for (const userId of deletedUsers) this.deps.accounts.memberChanged(userId);
    return { status: destroying.length === 0 ? 'deleted' : 'deleting', destroyingNodeIds: destroying };
  }

  /**
   * An owner without a password (an OpenID provider's or a passkey's) confirms with a current
   * factor, wrong ones limited and audited like any second factor (two-factor.ts), or with a
   * session a provider signed in minutes ago (the provider asked who they are just now).
   */
  private async confirmWithFactor(owner: AuthenticatedUser, input: DeletionConfirmation, from: DeletionSource) {
    const twoFactor = this.deps.twoFactor;
    const { code, recoveryCode, passkey } = input;
    const factorSent = code !== undefined || recoveryCode !== undefined || passkey !== undefined;
    if (!factorSent && from.freshProviderSignIn) return;
    if (!twoFactor || !(await twoFactor.hasFactor(owner.id))) {
      throw new AppError(
        'invalid_state',
        'you have no password and no second factor to confirm the deletion with: sign in again with your provider and delete within 10 minutes, or enrol an authenticator app or a passkey (/two-factor)',
      );
    }
    if (!factorSent) {
      throw new AppError('invalid_request', 'you have no password: confirm the deletion with a current factor (code, recoveryCode or passkey), or sign in again with your provider', { field: 'code' });
    }
    await twoFactor.check({ id: owner.id, email: owner.email, accountId: owner.accountId }, { code, recoveryCode, passkey }, from, 'confirm');
  }
}

const liveNodes = (ids: string[]) =>
  new AppError(
    'invalid_state',
    `the account has ${ids.length} node${ids.length === 1 ? '' : 's'} not destroyed; destroy ${ids.length === 1 ? 'it' : 'them'} first, or confirm with "destroyNodes": true`,
    { liveNodes: ids.length, nodeIds: ids.slice(0, 100) },
  );
