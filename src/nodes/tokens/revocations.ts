// Revocations of customers' node tokens reaching the node: RLN's POST /revoketoken with the whole
// token (opened from its seal). Sent at the revocation, and all of a node's revoked tokens that
// have not expired again after each successful unlock: a restart, an upgrade, a restore or a
// recovery onto a fresh volume may have lost the node's own list, or the node was stopped when the
// revocation was made. The gateway refuses a revoked token itself meanwhile; this is for whoever
// reaches the node's port without the gateway.
import type { Database } from '../../db/database.ts';
import { findUserNode } from '../../db/nodes.ts';
import { markNodeTold, revokedLiveNodeTokens } from '../../db/node-tokens.ts';
import type { StoredNodeToken } from '../../domain/node-tokens.ts';
import type { Node } from '../../domain/nodes.ts';
import type { Logger } from '../../logger.ts';
import type { UnlockSeal } from '../../secrets/unlock-seal.ts';
import type { NodeDaemons } from '../node-daemons.ts';
import { nodeTokenSealContext } from './seal-context.ts';

export class NodeTokenRevocations {
  constructor(private readonly deps: { db: Database; seal: Pick<UnlockSeal, 'open'>; daemons: Pick<NodeDaemons, 'of'>; log: Logger }) {}

  /** Sends the node the revocations it has not taken yet; one that fails stays pending. */
  async sendPending(nodeId: string): Promise<void> {
    const rows = (await revokedLiveNodeTokens(this.deps.db, nodeId)).filter((r) => r.nodeToldAt === null);
    if (rows.length === 0) return;
    const node = await this.nodeOf(nodeId);
    if (node) await this.send(node, rows);
  }

  /** After a successful unlock: every revoked token of the node that has not expired, again. */
  async resendAll(node: Node): Promise<void> {
    const rows = await revokedLiveNodeTokens(this.deps.db, node.id);
    if (rows.length > 0) await this.send(node, rows);
  }

  private async nodeOf(nodeId: string): Promise<Node | undefined> {
    const rows = await this.deps.db.query<{ user_id: string }>('SELECT user_id FROM nodes WHERE id = $1', [nodeId]);
    return rows[0] ? findUserNode(this.deps.db, rows[0].user_id, nodeId) : undefined;
  }

  private async send(node: Node, rows: StoredNodeToken[]): Promise<void> {
    if (node.status !== 'RUNNING') return; // told after its next unlock
    const told: string[] = [];
    for (const row of rows) {
      try {
        const token = this.deps.seal.open(row.sealedToken, nodeTokenSealContext(row.id));
        const answer = await this.deps.daemons.of(node).call('POST', '/revoketoken', { json: { token } });
        if (answer.status >= 200 && answer.status < 300) told.push(row.id);
        else this.deps.log.warn({ nodeId: node.id, tokenId: row.id, status: answer.status }, 'the node refused a node token revocation; sent again after its next unlock');
      } catch (err) {
        this.deps.log.warn({ nodeId: node.id, tokenId: row.id, err: (err as Error).message }, 'could not tell the node of a node token revocation; sent again after its next unlock');
      }
    }
    await markNodeTold(this.deps.db, told);
  }
}
