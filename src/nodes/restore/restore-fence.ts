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
import { AppError } from '../../errors.ts';
import type { Node } from '../../domain/nodes.ts';

export interface RestoreChoices {
  /** Stop the node that holds the wallet now and fence it for good, rather than refuse. */
  supersedeSource?: boolean;
  /** Restore even though the wallet has a newer successful backup. */
  confirmOlderBackup?: boolean;
}

// A chain of restores of one wallet longer than this is not something a user builds.
const MAX_CHAIN = 100;

const isGone = (node: Node) => node.destroyedAt !== null || node.status === 'DESTROYING' || node.status === 'DESTROYED';

/**
 * Checks a restore of `backup` against the wallet's other nodes, row-locking them (two restores of
 * one wallet at once go one after the other). Answers the live node to supersede, if the user chose
 * to, or the destroyed node that held the wallet last (`link`): the restored node is recorded as its
 * successor all the same, so a second restore of the wallet finds the first one's node live.
 * Throws 409 source_node_live or backup_older_than_source otherwise.
 */
export async function checkRestoreFence(
  tx: Queryable,
  backup: BackupRow,
  choices: RestoreChoices,
): Promise<{ supersede?: Node; link?: Node; tieUpload?: boolean }> {
  let sourceId = backup.origin === 'node' ? backup.node_id : backup.source_node_id;
  if (!sourceId) {
    // An upload of no known node: the node it is restored into holds its wallet from now on
    // (`tieUpload`), so a second restore of it meets that node. Locked: two at once go one after the other.
    sourceId = (await lockUploadSource(tx, backup.id)) ?? null;
    if (!sourceId) return { tieUpload: true };
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
  if (backup.for_export || chain.some((n) => n.status === 'EXPORTED') || (await anyNodeExported(tx, walletNodes))) {
    throw new AppError(
      'wallet_exported',
      `backup ${backup.id} holds the wallet of node ${sourceId}, which was exported: that wallet left with its owner's final backup and ` +
        'lives only in their copy now; restoring it here would make two live copies of one Lightning wallet, which lose funds',
      { sourceNodeId: sourceId },
    );
  }
  const newest = chain.length > 0 ? await newestSucceededNodeBackup(tx, chain.map((n) => n.id)) : undefined;
  if (newest && newest.created_at.getTime() > new Date(madeAt).getTime() && !choices.confirmOlderBackup) {
    throw new AppError(
      'backup_older_than_source',
      `backup ${backup.id} is older than the newest successful backup of its wallet (${newest.id} of node ${newest.node_id}, made ` +
        `${newest.created_at.toISOString()}): an older backup holds older channel states, and a node that broadcasts one loses the ` +
        'channel\'s funds to the peer. Restore the newest backup, or pass restore.confirmOlderBackup: true if you know the channels are safe',
      { newestBackupId: newest.id, newestBackupNodeId: newest.node_id, newestBackupAt: newest.created_at.toISOString() },
    );
  }
  const holder = chain.at(-1);
  if (!holder || holder.supersededBy) return {};
  if (isGone(holder)) return { link: holder };
  if (!choices.supersedeSource) {
    throw new AppError(
      'source_node_live',
      `backup ${backup.id} holds the wallet of node ${holder.id} (${holder.name}, ${holder.status}), which still exists: two live copies ` +
        'of one Lightning wallet will broadcast an old channel state and lose the funds. Destroy node ' +
        `${holder.id} first, or pass restore.supersedeSource: true to stop it and keep it from ever starting again`,
      { sourceNodeId: holder.id, status: holder.status, options: ['destroy the source node', 'restore.supersedeSource: true'] },
    );
  }
  return { supersede: holder };
}
