// The audit trail (migration 0013): appended to, read newest first.
import type { Queryable } from './database.ts';
import { jsonParam } from './storable-text.ts';

export interface AuditEventRow {
  id: string | number;
  at: Date;
  user_id: string | null;
  actor: string;
  source_ip: string | null;
  action: string;
  target: string | null;
  outcome: 'succeeded' | 'failed';
  details: Record<string, unknown>;
  node_id: string | null;
  actor_user_id: string | null;
  actor_email: string | null;
}

export interface NewAuditEvent {
  userId: string | null;
  actor: string;
  sourceIp: string | null;
  action: string;
  target: string | null;
  outcome: 'succeeded' | 'failed';
  details?: Record<string, unknown>;
  /** The node the event is about (migration 0019), which a token limited to nodes must reach to read it. */
  nodeId?: string | null;
  /** The member who acted (migration 0022); `userId` is the account whose trail this is. */
  actorUserId?: string | null;
  actorEmail?: string | null;
}

export async function insertAuditEvent(db: Queryable, e: NewAuditEvent) {
  await db.query(
    `INSERT INTO audit_events (user_id, actor, source_ip, action, target, outcome, details, node_id, actor_user_id, actor_email)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [e.userId, e.actor, e.sourceIp, e.action, e.target, e.outcome, jsonParam(e.details ?? {}), e.nodeId ?? null, e.actorUserId ?? null, e.actorEmail ?? null],
  );
}

/**
 * Newest first: the user's trail (`userId`), or everyone's (undefined); only the events about
 * `nodeIds` when given (a token limited to nodes); older than `beforeId` when given.
 */
export async function listAuditEvents(db: Queryable, filter: { userId?: string; nodeIds?: readonly string[] | null; beforeId?: number; limit: number }) {
  return db.query<AuditEventRow>(
    `SELECT * FROM audit_events
     WHERE ($1::text IS NULL OR user_id = $1) AND ($2::bigint IS NULL OR id < $2)
       AND ($4::text[] IS NULL OR node_id = ANY($4::text[]))
     ORDER BY id DESC LIMIT $3`,
    [filter.userId ?? null, filter.beforeId ?? null, filter.limit, filter.nodeIds ?? null],
  );
}

export async function findAuditEvent(db: Queryable, id: number) {
  return (await db.query<AuditEventRow>('SELECT * FROM audit_events WHERE id = $1', [id]))[0];
}

/** The owner of a node, whose trail an action on it belongs to. */
export async function findNodeOwner(db: Queryable, nodeId: string) {
  return (await db.query<{ user_id: string }>('SELECT user_id FROM nodes WHERE id = $1', [nodeId]))[0]?.user_id ?? null;
}
