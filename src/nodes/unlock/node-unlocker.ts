// Unlocking a node: the user's password (and announce settings) completed with the network's
// chain-sync, indexer and proxy settings, sent to the node, and on success the node is recorded
// as unlocked. Used by both gateways (which pass the node's answer through) and by the management
// API's POST /api/nodes/{id}/unlock (which turns a refusal into one of its error codes).
import type { Database } from '../../db/database.ts';
import { findUserNode } from '../../db/nodes.ts';
import { AppError, nodeNotFound } from '../../errors.ts';
import type { NodeService } from '../service.ts';
import type { PasswordCheck } from './auto-unlock.ts';
import type { Logger } from '../../logger.ts';
import type { NodeDaemons } from '../node-daemons.ts';
import { answerJson, isSuccess, nodeRefusal, type RlnAnswer } from '../../rln/answer.ts';
import type { UnlockSettings } from '../../rln/settings.ts';
import { buildUnlockBody, unlockFormatFor, type UnlockInput } from '../../rln/unlock-body.ts';
import type { AnswerWarning, NodeIdentityWatch } from './node-identity.ts';
import type { Node } from '../../domain/nodes.ts';
import { requireDaemonCallable } from '../lifecycle.ts';
import { DAEMON_FORGOT_WALLET, daemonForgotWallet, markStorageLost } from '../health/storage-lost.ts';

export interface NodeUnlockerDeps {
  db: Database;
  config: UnlockSettings;
  nodes: Pick<NodeService, 'markUnlocked' | 'markInitialized'>;
  /** Each node's daemon, its RLN calls bound to its address (node-daemons.ts). */
  daemons: Pick<NodeDaemons, 'of'>;
  /** Told the node pubkey after every successful unlock (one wallet on two nodes); absent: no check. */
  identity?: Pick<NodeIdentityWatch, 'reported'>;
  /**
   * Sends the node, after every successful unlock, the customers' node tokens revoked and not yet
   * expired (nodes/tokens/revocations.ts): its own list may be lost or behind; absent: nothing sent.
   */
  revocations?: { resendAll(node: Node): Promise<void> };
  log: Logger;
}

/** The node's answer to an unlock, and what the service warns about once it succeeded. */
export type UnlockAnswer = RlnAnswer & { warnings: AnswerWarning[] };

export class NodeUnlocker {
  constructor(private readonly deps: NodeUnlockerDeps) {}

  /** Sends the completed unlock to a RUNNING node; answers the node's own answer. */
  async unlock(node: Node, input: UnlockInput, extraHeaders: Record<string, string> = {}): Promise<UnlockAnswer> {
    const { config } = this.deps;
    if (input.network !== undefined && input.network !== node.network) {
      throw new AppError('invalid_request', `network is ${input.network}, but node ${node.id} runs on ${node.network}`);
    }
    const body = buildUnlockBody(input, config.chain[node.network], unlockFormatFor(node.imageVersion, config), config.unlockChainSettings);
    const answer = await this.deps.daemons.of(node).unlock(body, extraHeaders);
    if (daemonForgotWallet(node, answer)) {
      // Its wallet's files are gone (storage-lost.ts): RLN's /nodeinfo answers LockedNode with or
      // without a wallet, so an unlock is where a lost storage shows through the daemon.
      await recordSafely(this.deps.log, node.id, 'storage lost', async () => {
        await markStorageLost(this.deps.db, node.id, { detectedBy: 'daemon', reason: DAEMON_FORGOT_WALLET });
      });
    }
    if (!isSuccess(answer.status)) return { ...answer, warnings: [] };
    await recordSafely(this.deps.log, node.id, 'unlocked', () => this.deps.nodes.markUnlocked(node.id));
    try {
      await this.deps.revocations?.resendAll(node);
    } catch (err) {
      this.deps.log.error({ err, nodeId: node.id }, 'could not send the node its revoked node tokens after an unlock');
    }
    return { ...answer, warnings: await this.checkIdentity(node) };
  }

  /**
   * The node's pubkey, now that it is unlocked (RLN's /nodeinfo answers only then), told to the
   * identity watch. Best effort: the unlock succeeded whatever happens here.
   */
  private async checkIdentity(node: Node): Promise<AnswerWarning[]> {
    if (!this.deps.identity) return [];
    try {
      const info = await this.deps.daemons.of(node).nodeInfo();
      if (!isSuccess(info.status)) return [];
      return await this.deps.identity.reported(node, answerJson(info)?.pubkey);
    } catch (err) {
      this.deps.log.warn({ err, nodeId: node.id }, 'could not read the node pubkey after an unlock');
      return [];
    }
  }

  /** An unlock with only a password whose refusal by the node is the service's error (backups unlock again what they locked). */
  async unlockOrRefuse(node: Node, password: string): Promise<void> {
    const answer = await this.unlock(node, { password });
    if (!isSuccess(answer.status)) throw nodeRefusal(answer);
  }

  /**
   * Automatic unlock's use of the node (nodes/unlock/auto-unlock.ts): the unlock with only a password,
   * and what the node's answer means for it. A node that says it is unlocked already is recorded
   * as unlocked: that is what it is.
   */
  async unlockWithPassword(node: Node, password: string): Promise<PasswordCheck> {
    const answer = await this.unlock(node, { password });
    if (isSuccess(answer.status)) return { outcome: 'unlocked' };
    const refusal = nodeRefusal(answer);
    const nodeError = refusal.details?.nodeError;
    // Only RLN's own verdict on the password: a 401 for missing credentials (a node run with
    // authentication by mistake) must not count as a wrong password and erase the sealed one.
    if (answer.status === 401 && (nodeError === 'WrongPassword' || nodeError === undefined)) return { outcome: 'wrong_password' };
    if (answer.status === 403 && (nodeError === 'AlreadyUnlocked' || nodeError === 'UnlockedNode')) {
      await recordSafely(this.deps.log, node.id, 'unlocked', () => this.deps.nodes.markUnlocked(node.id));
      return { outcome: 'already_unlocked' };
    }
    if (answer.status === 403 && nodeError === 'NotInitialized') return { outcome: 'not_initialized' };
    return { outcome: 'refused', error: refusal };
  }

  /**
   * The management API's (and the web UI's) wallet initialisation: the node's /init with the
   * password (and a recovery phrase to recover from, if given), recorded on success; answers the
   * mnemonic, which the node shows this once.
   */
  async initUserNode(userId: string, nodeId: string, password: string, recoveryPhrase?: string): Promise<{ mnemonic: string }> {
    const node = await findUserNode(this.deps.db, userId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    requireDaemonCallable(node);
    // A recovery phrase goes to the node and nowhere else (RLN's /init recovers the wallet from it).
    const body = recoveryPhrase === undefined ? { password } : { password, mnemonic: recoveryPhrase };
    const answer = await this.deps.daemons.of(node).init(body);
    if (!isSuccess(answer.status)) throw nodeRefusal(answer, 'initialise');
    await recordSafely(this.deps.log, node.id, 'initialized', () => this.deps.nodes.markInitialized(node.id));
    const mnemonic = answerJson(answer)?.mnemonic;
    if (typeof mnemonic !== 'string') throw new AppError('node_error', 'the node initialised its wallet but answered no mnemonic');
    return { mnemonic };
  }

  /** The management API's unlock: the node's refusal becomes a management error. */
  async unlockUserNode(userId: string, nodeId: string, input: UnlockInput): Promise<{ warnings: AnswerWarning[] }> {
    const node = await findUserNode(this.deps.db, userId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    requireDaemonCallable(node);
    const answer = await this.unlock(node, input);
    if (!isSuccess(answer.status)) throw nodeRefusal(answer);
    return { warnings: answer.warnings };
  }
}

/**
 * The node already did it: failing to record it must not lose the node's answer (the mnemonic
 * of /init is shown once), so the failure is logged and the next unlock or probe catches up.
 */
export async function recordSafely(log: Logger, nodeId: string, what: string, record: () => Promise<void>) {
  try {
    await record();
  } catch (err) {
    log.error({ err, nodeId }, `could not record that the node was ${what}`);
  }
}
