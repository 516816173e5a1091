// Nodes' storage use as measured (nodes/upkeep/storage-meter.ts), kept on the node's row.
import type { Queryable } from './database.ts';
import type { NodeStorageUse } from '../domain/nodes.ts';

/** Records a measurement of a node; a node destroyed meanwhile is left as it is. */
export async function recordNodeStorage(db: Queryable, nodeId: string, use: NodeStorageUse): Promise<void> {
  await db.query(
    `UPDATE nodes SET storage_used_bytes = $2, storage_capacity_bytes = $3, storage_available_bytes = $4, storage_measured_at = $5
     WHERE id = $1 AND status <> 'DESTROYED'`,
    [nodeId, use.usedBytes, use.capacityBytes, use.availableBytes, use.measuredAt],
  );
}

/**
 * The largest share of its volume in use among the RUNNING nodes (0 to 1), from their last
 * measurements; undefined when none was measured.
 */
export async function fullestNodeStorage(db: Queryable): Promise<number | undefined> {
  const [row] = await db.query<{ ratio: number | string | null }>(
    `SELECT max(1 - storage_available_bytes::float8 / storage_capacity_bytes) AS ratio
     FROM nodes WHERE status = 'RUNNING' AND storage_capacity_bytes > 0`,
  );
  return row?.ratio === null || row?.ratio === undefined ? undefined : Number(row.ratio);
}
