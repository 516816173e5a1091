// A receiver that answers 410 Gone asks never to be called again: the attempt is recorded, the
// node's webhook URL removed (a change of the node like any other, through the lifecycle table)
// and its waiting deliveries cancelled, all in one transaction.
import type { Database } from '../db/database.ts';
import { lockNode } from '../db/nodes.ts';
import {
  cancelPendingDeliveries,
  settleDeliveries,
  type AttemptRecord,
  type ClaimedDelivery,
  type Settlement,
} from '../db/webhook-deliveries.ts';
import { decide } from '../nodes/lifecycle.ts';
import { changeNode } from '../nodes/transition.ts';

const CANCELLED_AFTER_GONE = 'the receiver answered 410 Gone to an earlier delivery; the webhook URL was removed';

/** Records one attempt and moves its delivery on, atomically; a 410 also stops sending to the URL. */
export async function settleDelivery(db: Database, d: ClaimedDelivery, attempt: AttemptRecord, outcome: Settlement) {
  if (outcome.state !== 'gone') return void (await settleDeliveries(db, [{ delivery: d, attempt, outcome }]));
  await db.transaction(async (tx) => {
    const settled = await settleDeliveries(tx, [{ delivery: d, attempt, outcome: { state: 'failed', error: outcome.error } }]);
    if (settled.size === 0) return; // the lease went to another worker meanwhile: its outcome counts
    const node = await lockNode(tx, d.nodeId);
    if (!node) return;
    // A URL set since this delivery started is a new receiver: it keeps its deliveries.
    const decision = decide({ type: 'webhookGone', url: attempt.url }, node);
    if (decision.outcome !== 'change') return;
    await changeNode(tx, node, decision.change);
    await cancelPendingDeliveries(tx, node.id, CANCELLED_AFTER_GONE);
  });
}
