// One live copy of a Lightning wallet. Two nodes running one wallet will, sooner or later, broadcast
// an old channel state, and the channel's peer then takes the funds with a penalty transaction. So a
// restore of a backup whose node (or a node that wallet was restored into since) still exists is
// refused unless the user has the restore supersede that node: it is stopped and fenced for good
// (nodes/lifecycle.ts, `supersede`). And a backup older than the wallet's newest successful backup
// holds an older channel state: restoring it needs the user's explicit confirmation.
//
// A backup's source is its node; an upload's is the node whose backup has the same SHA-256 among the
// user's (the file itself says nothing the service can read: it is encrypted as a whole). An upload
// the service does not recognise has no known source, and neither check can apply to it, until it
// is restored: the node it went into is its source from then on.
//
// A wallet exported (POST /api/nodes/{id}/export) left with its owner: the customer's copy is the
// only live one, so no backup of it is restored here again, whatever became of its node since.
import type { Queryable } from '../../db/database.ts';
import { anyNodeExported, lockUploadSource, newestSucceededNodeBackup, type BackupRow } from '../../db/backups.ts';
import { lockNode } from '../../db/nodes.ts';
import type { Node } from '../../domain/nodes.ts';

export interface RestoreChoices {
  /** Stop the node that holds the wallet now and fence it for good, rather than refuse. */
  supersedeSource?: boolean;
  /** Restore even though the wallet has a newer successful backup. */
  confirmOlderBackup?: boolean;
}

/**
 * What a restore of a backup meets among its wallet's nodes: the facts the lifecycle's create rule
 * judges the restore on (nodes/lifecycle.ts: a wallet exported, a newer backup, a live holder).
 */
export interface RestoreFence {
  backupId: string;
  /** The node whose wallet the backup holds, if it is known. */
  sourceId: string | null;
  /** The wallet left with its owner (an export): no backup of it is restored here again. */
  exported: boolean;
  /** The wallet's newest successful backup, when it is newer than this one (found only when not exported). */
  newer?: { id: string; nodeId: string | null; at: Date };
  /** The node that holds the wallet now and still lives: a restore supersedes it, or is refused. */
  live?: Node;
  /** The destroyed node that held the wallet last: the restored node is recorded as its successor. */
  link?: Node;
  /** An upload of no known node: the node it is restored into holds its wallet from now on. */
  tieUpload?: boolean;
}

// A chain of restores of one wallet longer than this is not something a user builds.
const MAX_CHAIN = 100;

const isGone = (node: Node) => node.destroyedAt !== null || node.status === 'DESTROYING' || node.status === 'DESTROYED';

/**
 * Finds what a restore of `backup` meets among the wallet's other nodes, row-locking them (two
 * restores of one wallet at once go one after the other). Whether the restore may go ahead is the
 * create rule's to say (nodes/lifecycle.ts).
 */
export async function findRestoreFence(tx: Queryable, backup: BackupRow): Promise<RestoreFence> {
  let sourceId = backup.origin === 'node' ? backup.node_id : backup.source_node_id;
  if (!sourceId) {
    // An upload of no known node: the node it is restored into holds its wallet from now on
    // (`tieUpload`), so a second restore of it meets that node. Locked: two at once go one after the other.
    sourceId = (await lockUploadSource(tx, backup.id)) ?? null;
    if (!sourceId) return { backupId: backup.id, sourceId: null, exported: false, tieUpload: true };
  }
  const madeAt = backup.origin === 'node' ? backup.created_at : (backup.source_made_at ?? backup.created_at);
  // The wallet's nodes: its source, then each node a restore of it went into.
  const chain: Node[] = [];
  let next: string | null = sourceId;
  while (next && chain.length < MAX_CHAIN) {
    const node: Node | undefined = await lockNode(tx, next);
    // Purged long after it was destroyed; a node's restores are its owner's only.
    if (!node || node.userId !== backup.user_id) break;
    chain.push(node);
    next = node.supersededBy;
  }
  const walletNodes = [...new Set([sourceId, ...chain.map((n) => n.id)])];
  const fence: RestoreFence = { backupId: backup.id, sourceId, exported: false };
  if (backup.for_export || chain.some((n) => n.status === 'EXPORTED') || (await anyNodeExported(tx, walletNodes))) return { ...fence, exported: true };
  const newest = chain.length > 0 ? await newestSucceededNodeBackup(tx, chain.map((n) => n.id)) : undefined;
  if (newest && newest.created_at.getTime() > new Date(madeAt).getTime()) fence.newer = { id: newest.id, nodeId: newest.node_id, at: newest.created_at };
  const holder = chain.at(-1);
  if (!holder || holder.supersededBy) return fence;
  return isGone(holder) ? { ...fence, link: holder } : { ...fence, live: holder };
}
