// One wallet on two live nodes: a recovery phrase (or a backup) used on a new node while the node
// it came from still runs gives both the same Lightning identity, and sooner or later one of them
// broadcasts an old channel state and the channel's peer takes the funds. A node's pubkey is only
// known once it is unlocked (RLN's /nodeinfo answers only then), so the check runs after every
// successful unlock: the pubkey is recorded, and another live node with the same one is warned
// about in the unlock's answer, as a node event (webhooks, the timeline) and in the audit trail.
import type { Database } from '../../db/database.ts';
import { recordNodePubkey } from '../../db/node-pubkeys.ts';
import { recordNodeEvent } from '../../db/node-events.ts';
import type { AuditLog } from '../../audit/audit-log.ts';
import type { Logger } from '../../logger.ts';

/** A warning attached to an answer that succeeded; `code` is stable, `message` for people. */
export interface AnswerWarning {
  code: 'identity_shared';
  message: string;
}

// RLN's node pubkey: a compressed secp256k1 key, 33 bytes in hex.
const PUBKEY = /^0[23][0-9a-f]{64}$/;

export interface NodeIdentityDeps {
  db: Database;
  audit?: Pick<AuditLog, 'record'>;
  log: Logger;
}

export class NodeIdentityWatch {
  constructor(private readonly deps: NodeIdentityDeps) {}

  /**
   * Records the pubkey the node reported; answers a warning when another live node reports it
   * too. Never fails the unlock it follows: a failure is logged and answers no warning.
   */
  async reported(node: { id: string; userId: string }, pubkey: unknown): Promise<AnswerWarning[]> {
    if (typeof pubkey !== 'string' || !PUBKEY.test(pubkey)) return [];
    try {
      const shared = await this.deps.db.transaction(async (tx) => {
        const others = await recordNodePubkey(tx, node.id, pubkey);
        if (others.length === 0) return undefined;
        // Another account's node ids are not this user's to know: only how many there are.
        const details = {
          pubkey,
          sharedWith: others.filter((o) => o.user_id === node.userId).map((o) => o.id),
          otherAccounts: others.filter((o) => o.user_id !== node.userId).length,
        };
        await recordNodeEvent(tx, node, 'NODE_IDENTITY_SHARED', details);
        return details;
      });
      if (!shared) return [];
      await this.deps.audit?.record({
        userId: node.userId,
        actor: 'service',
        sourceIp: null,
        action: 'node.identity_shared',
        target: node.id,
        outcome: 'succeeded',
        details: shared,
      });
      const where = [
        ...(shared.sharedWith.length ? [`your node${shared.sharedWith.length > 1 ? 's' : ''} ${shared.sharedWith.join(', ')}`] : []),
        ...(shared.otherAccounts ? [`${shared.otherAccounts} node${shared.otherAccounts > 1 ? 's' : ''} of another account`] : []),
      ].join(' and ');
      return [
        {
          code: 'identity_shared',
          message:
            `node ${node.id} runs the wallet (node pubkey ${pubkey}) that ${where} also run${shared.sharedWith.length + shared.otherAccounts > 1 ? '' : 's'}: ` +
            'two live copies of one Lightning wallet can lose its channel funds; stop or destroy all but one',
        },
      ];
    } catch (err) {
      this.deps.log.error({ err, nodeId: node.id }, 'could not check whether another node runs the same wallet');
      return [];
    }
  }
}
