// Log export tasks: what a user asked to export, and where its archive parts are once finished.
import type { Queryable } from './database.ts';
import { jsonParam } from './storable-text.ts';

export type LogExportStatus = 'IN_PROGRESS' | 'SUCCEEDED' | 'FAILED';

export interface LogExportPart {
  key: string;
  bytes: number;
}

export interface LogExportRow {
  id: string;
  node_id: string;
  user_id: string;
  status: LogExportStatus;
  range_from: Date | null;
  range_to: Date | null;
  parts: LogExportPart[];
  input_bytes: string | number | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  finished_at: Date | null;
}

export async function insertLogExport(
  db: Queryable,
  e: { id: string; nodeId: string; userId: string; from: Date | null; to: Date | null },
) {
  return (
    await db.query<LogExportRow>(
      `INSERT INTO log_exports (id, node_id, user_id, status, range_from, range_to)
       VALUES ($1, $2, $3, 'IN_PROGRESS', $4, $5) RETURNING *`,
      [e.id, e.nodeId, e.userId, e.from, e.to],
    )
  )[0]!;
}

export async function findLogExport(db: Queryable, id: string) {
  return (await db.query<LogExportRow>('SELECT * FROM log_exports WHERE id = $1', [id]))[0];
}

/** A task as its owner sees it through one node: any other combination looks missing. */
export async function findNodeLogExport(db: Queryable, userId: string, nodeId: string, id: string) {
  return (
    await db.query<LogExportRow>('SELECT * FROM log_exports WHERE id = $1 AND node_id = $2 AND user_id = $3', [id, nodeId, userId])
  )[0];
}

export async function findLogExportInProgress(db: Queryable, nodeId: string) {
  return (await db.query<LogExportRow>(`SELECT * FROM log_exports WHERE node_id = $1 AND status = 'IN_PROGRESS'`, [nodeId]))[0];
}

/** Returns the row when it was still in progress (a timed-out task is not revived). */
export async function markLogExportSucceeded(db: Queryable, id: string, parts: LogExportPart[], inputBytes: number) {
  return (
    await db.query<LogExportRow>(
      `UPDATE log_exports SET status = 'SUCCEEDED', parts = $2, input_bytes = $3, finished_at = now()
       WHERE id = $1 AND status = 'IN_PROGRESS' RETURNING *`,
      [id, jsonParam(parts), inputBytes],
    )
  )[0];
}

export async function markLogExportFailed(db: Queryable, id: string, code: string, message: string) {
  return (
    await db.query<LogExportRow>(
      `UPDATE log_exports SET status = 'FAILED', error_code = $2, error_message = $3, finished_at = now()
       WHERE id = $1 AND status = 'IN_PROGRESS' RETURNING *`,
      [id, code, message],
    )
  )[0];
}

/** Fails every export still running that was requested before `startedBefore`. */
export async function failLogExportsStartedBefore(db: Queryable, startedBefore: Date, code: string, message: string) {
  return db.query<LogExportRow>(
    `UPDATE log_exports SET status = 'FAILED', error_code = $2, error_message = $3, finished_at = now()
     WHERE status = 'IN_PROGRESS' AND created_at < $1 RETURNING *`,
    [startedBefore, code, message],
  );
}

export async function listLogExportsCreatedBefore(db: Queryable, createdBefore: Date, limit = 500) {
  return db.query<LogExportRow>(
    'SELECT * FROM log_exports WHERE created_at < $1 ORDER BY created_at LIMIT $2',
    [createdBefore, limit],
  );
}

export async function deleteLogExport(db: Queryable, id: string) {
  await db.query('DELETE FROM log_exports WHERE id = $1', [id]);
}
