// Automatic unlock, opt-in per node: the user gives the wallet password once, the service checks
// it against the node and keeps it sealed (secrets/unlock-seal.ts) under a key that is not in the
// database, and unlocks the node itself after every daemon start (the auto-unlock job,
// auto-unlock-job.ts). A password the node refuses later (changed on the node) turns it off, with
// a NODE_AUTO_UNLOCK_DISABLED event. docs/API.md "Automatic unlock" states who can unlock what.
import type { Database } from '../../db/database.ts';
import { findNode, findUserNode, lockNode, lockUserNode } from '../../db/nodes.ts';
import { listSealedAutoUnlockPasswords, replaceSealedAutoUnlockPassword } from '../../db/auto-unlock.ts';
import { AppError, nodeNotFound } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { SealError, type UnlockSeal } from '../../secrets/unlock-seal.ts';
import type { SealedValueStore } from '../../secrets/unlock-seal-keys.ts';
import type { AuditLog } from '../../audit/audit-log.ts';
import { decide, refusalError, type NodeRequest } from '../lifecycle.ts';
import { applyDecision } from '../transition.ts';
import type { Node } from '../../domain/nodes.ts';
import type { NodeUnlocker } from './node-unlocker.ts';

/**
 * What the node answered to /unlock with a password (nodes/unlock/node-unlocker.ts: unlockWithPassword,
 * which completes the body with the network's chain settings and records a success).
 */
export type PasswordCheck =
  /** The node took the password and is unlocked now. */
  | { outcome: 'unlocked' }
  /** The node was unlocked already: it did not look at the password. */
  | { outcome: 'already_unlocked' }
  | { outcome: 'wrong_password' }
  | { outcome: 'not_initialized' }
  /** Anything else (busy changing state, an error): to report, or to try again later. */
  | { outcome: 'refused'; error: AppError };

/** Why automatic unlock was turned off without the user asking (NODE_AUTO_UNLOCK_DISABLED's `reason`). */
export type AutoUnlockDisabledReason = 'wrong_password' | 'not_initialized' | 'seal_unreadable';

export interface AutoUnlockAnswer {
  nodeId: string;
  autoUnlock: boolean;
  /**
   * Whether the node checked the password now. False when it was unlocked already: RLN checks a
   * password only while locked, so it is checked at the next daemon start instead.
   */
  passwordChecked: boolean;
  locked: boolean;
}

/** The outcome of one automatic unlock, for the job's log. */
export type AutoUnlockResult = 'unlocked' | 'nothing to do' | `turned off: ${AutoUnlockDisabledReason}`;

export interface AutoUnlockDeps {
  db: Database;
  seal: Pick<UnlockSeal, 'seal' | 'open'>;
  /** The gateways' unlock with only a password, and what the node's answer means here. */
  unlocker: Pick<NodeUnlocker, 'unlockWithPassword'>;
  /** The service's own unlocks, and its turning automatic unlock off, go into the owner's trail. */
  audit?: Pick<AuditLog, 'record'>;
  log: Logger;
}

/**
 * What a sealed auto-unlock password is bound to: this node, this use. A value copied onto another
 * node, or a secret sealed for another use of the same node, does not open as one.
 */
export const autoUnlockAssociatedData = (nodeId: string) => `auto-unlock/${nodeId}`;

/** The sealed passwords as a key rotation sees them (secrets/unlock-seal-keys.ts). */
export const AUTO_UNLOCK_PASSWORDS: SealedValueStore = {
  what: 'auto-unlock passwords',
  async list(db) {
    const rows = await listSealedAutoUnlockPasswords(db);
    return rows.map((r) => ({ id: r.id, sealed: r.auto_unlock_sealed, associatedData: autoUnlockAssociatedData(r.id) }));
  },
  replace: replaceSealedAutoUnlockPassword,
};

export class AutoUnlockService {
  constructor(private readonly deps: AutoUnlockDeps) {}

  /**
   * Turns automatic unlock on with `password` (or replaces the password). The node checks it
   * first with a real unlock: a locked node ends unlocked, a wrong password stores nothing (403
   * wrong_password). A node that is unlocked already cannot check it (RLN checks passwords only
   * while locked, and locking it to check would interrupt it): the password is stored unchecked
   * and checked at the next daemon start, where a wrong one turns automatic unlock off again.
   */
  async enable(userId: string, nodeId: string, password: string): Promise<AutoUnlockAnswer> {
    const node = await findUserNode(this.deps.db, userId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    // Refused before anything is sent to the node (destroyed, not running), and again below.
    const early = decide({ type: 'enableAutoUnlock', sealed: '' }, node);
    if (early.outcome === 'refused') throw refusalError(early.refusal);

    const check = await this.deps.unlocker.unlockWithPassword(node, password);
    switch (check.outcome) {
      case 'wrong_password':
        throw new AppError('wrong_password', 'the node refused the password; automatic unlock stays as it was');
      case 'not_initialized':
        throw new AppError('node_state_conflict', `node ${nodeId} has no wallet yet: initialise it (POST /api/nodes/${nodeId}/init), then turn automatic unlock on`, {
          nodeError: 'NotInitialized',
        });
      case 'refused':
        throw check.error;
    }
    // Sealed only now, after the (possibly slow) unlock, so a key rotation meanwhile is seen.
    const after = await this.deps.db.transaction(async (tx) => {
      const current = await lockUserNode(tx, userId, nodeId);
      if (!current) throw nodeNotFound(nodeId);
      const sealed = this.deps.seal.seal(password, autoUnlockAssociatedData(nodeId));
      return applyDecision(tx, current, decide({ type: 'enableAutoUnlock', sealed }, current));
    });
    return { nodeId, autoUnlock: true, passwordChecked: check.outcome === 'unlocked', locked: after.locked };
  }

  /** Turns automatic unlock off and erases the sealed password; nothing to do when it is off. */
  async disable(userId: string, nodeId: string): Promise<AutoUnlockAnswer> {
    const after = await this.deps.db.transaction(async (tx) => {
      const node = await lockUserNode(tx, userId, nodeId);
      if (!node) throw nodeNotFound(nodeId);
      return applyDecision(tx, node, decide({ type: 'disableAutoUnlock' }, node));
    });
    return { nodeId, autoUnlock: false, passwordChecked: false, locked: after.locked };
  }

  /**
   * Unlocks a node whose daemon (re)started, if it still has automatic unlock on and is RUNNING
   * and locked. A password the node refuses, a node without a wallet, or a sealed value that no
   * longer opens turn automatic unlock off (with an event); anything else throws, so the job
   * tries again (the daemon may still be starting).
   */
  async unlockAfterStart(nodeId: string): Promise<AutoUnlockResult> {
    const node = await findNode(this.deps.db, nodeId);
    const sealed = node?.autoUnlockSealed;
    // Only a daemon that may be called (nodes/lifecycle.ts: RUNNING, not superseded or exported).
    if (!node || !sealed || !node.locked || decide({ type: 'callDaemon' }, node).outcome === 'refused') return 'nothing to do';
    let password: string;
    try {
      password = this.deps.seal.open(sealed, autoUnlockAssociatedData(nodeId));
    } catch (err) {
      // A key file that cannot be read now is retried; a value no key opens never will be.
      if (!(err instanceof SealError)) throw err;
      this.deps.log.error({ nodeId, err: err.message }, 'the sealed auto-unlock password does not open; turning automatic unlock off');
      return this.turnOff(nodeId, sealed, 'seal_unreadable');
    }
    const check = await this.deps.unlocker.unlockWithPassword(node, password);
    await this.auditAutomaticUnlock(node, check);
    switch (check.outcome) {
      case 'unlocked':
      case 'already_unlocked':
        return 'unlocked';
      case 'wrong_password':
      case 'not_initialized':
        return this.turnOff(nodeId, sealed, check.outcome);
      case 'refused':
        throw check.error;
    }
  }

  /** The service's own unlock, in the owner's trail; one that found the node unlocked already did nothing. */
  private async auditAutomaticUnlock(node: Node, check: PasswordCheck) {
    if (check.outcome === 'already_unlocked') return;
    const unlocked = check.outcome === 'unlocked';
    await this.deps.audit?.record({
      userId: node.userId,
      actor: 'service',
      sourceIp: null,
      action: 'node.unlock',
      target: node.id,
      nodeId: node.id,
      outcome: unlocked ? 'succeeded' : 'failed',
      details: { automatic: true, ...(unlocked ? {} : { code: check.outcome }) },
    });
  }

  /** Off, the sealed password erased and the user told, unless it was changed meanwhile. */
  private async turnOff(nodeId: string, sealed: string, reason: AutoUnlockDisabledReason): Promise<AutoUnlockResult> {
    const request: NodeRequest = { type: 'autoUnlockFailed', sealed };
    const changed = await this.deps.db.transaction(async (tx) => {
      const node = await lockNode(tx, nodeId);
      if (!node) return false;
      const decision = decide(request, node);
      await applyDecision(tx, node, decision, (after) => [{ node: after, eventType: 'NODE_AUTO_UNLOCK_DISABLED', details: { reason } }]);
      return decision.outcome === 'change';
    });
    if (!changed) return 'nothing to do';
    const owner = await findNode(this.deps.db, nodeId);
    await this.deps.audit?.record({
      userId: owner?.userId ?? null,
      actor: 'service',
      sourceIp: null,
      action: 'node.auto_unlock.disabled',
      target: nodeId,
      nodeId: nodeId,
      outcome: 'succeeded',
      details: { reason },
    });
    return `turned off: ${reason}`;
  }
}
