// The audit log: who did what to which resource, from where, and with what outcome. Recorded after
// the action by whoever carried it out (the management API's routes through their `audit` route
// option, the gateways' unlock, the operator's commands, the service itself); a failure to record
// is logged loudly but never undoes or fails the action it describes.
import type { Database } from '../db/database.ts';
import { findAuditEvent, findNodeOwner, insertAuditEvent, listAuditEvents, type AuditEventRow, type NewAuditEvent } from '../db/audit-events.ts';
import { decodeCursor, encodeCursor, pageOf, staleCursor } from '../domain/paging.ts';
import type { Logger } from '../logger.ts';

/** What is audited; a closed list, so the trail can be read by machines. */
export const AUDIT_ACTIONS = [
  'token.created',
  'token.revoked',
  'certificate.issued',
  'certificate.revoked',
  'node_token.minted',
  'node_token.revoked',
  'node.unlock',
  'node.auto_unlock.enabled',
  'node.auto_unlock.disabled',
  'node.destroyed',
  'node.exported',
  'node.recovered',
  'node.identity_shared',
  'backup.created',
  'backup.deleted',
  'release.published',
  'authentication.rollout_started',
  'session.sign_in',
  'session.ended',
  'session.others_ended',
  'notifications.changed',
  'member.invited',
  'member.invitation_revoked',
  'member.joined',
  'member.role_changed',
  'member.removed',
  'member.left',
  'account.transfer_offered',
  'account.transfer_withdrawn',
  'account.transferred',
  'account.deleted',
  'plan.created',
  'plan.changed',
  'account.plan_changed',
  'usage.month_closed',
  'member.calls_capped',
  'token.calls_capped',
  // Self-service sign-up, email verification and password reset (signup/service.ts).
  'user.signed_up',
  'user.oidc_linked',
  'user.oidc_unlinked',
  'user.signup_attempted',
  'user.email_verified',
  'user.password_reset_requested',
  'user.password_reset',
  'signup.approved',
  'signup.rejected',
  // Second factors (accounts/two-factor.ts): enrolment, a factor checked (at sign-in or to turn it off),
  // a factor turned off, a recovery code spent, the owner's rule, the operator's reset.
  'two_factor.enabled',
  'two_factor.checked',
  'two_factor.disabled',
  'two_factor.recovery_code_used',
  'account.two_factors_required',
  'two_factor.reset',
  'two_factor.passkey_renamed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export type AuditEntry = Omit<NewAuditEvent, 'action'> & { action: AuditAction };

export interface ApiAuditEvent {
  id: string;
  at: string;
  actor: string;
  /** The member who acted, when a member did; null for the operator, the service, and events from before accounts. */
  actorUserId: string | null;
  actorEmail: string | null;
  sourceIp: string | null;
  action: string;
  target: string | null;
  outcome: 'succeeded' | 'failed';
  details: Record<string, unknown>;
}

/** What the audit log reports (metrics/service-metrics.ts implements it). */
export interface AuditMetrics {
  /** An event could not be recorded: alert on any. */
  auditRecordFailed(): void;
}

/**
 * The longest text of an event kept whole (a target, an actor, a string in details): past it, the
 * start is kept and a marker says how long it was, so a hostile request cannot grow the trail by
 * its body's size. What PostgreSQL cannot store at all is replaced at the database edge
 * (db/storable-text.ts).
 */
export const AUDIT_TEXT_MAX = 512;

export function boundedAuditText(text: string): string {
  if (text.length <= AUDIT_TEXT_MAX) return text;
  return `${text.slice(0, AUDIT_TEXT_MAX)}…[truncated: ${text.length} characters]`;
}

function boundedDetails(value: unknown): unknown {
  if (typeof value === 'string') return boundedAuditText(value);
  if (Array.isArray(value)) return value.map(boundedDetails);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [boundedAuditText(k), boundedDetails(v)]));
}

const bounded = (text: string | null) => (text === null ? null : boundedAuditText(text));

export class AuditLog {
  constructor(private readonly deps: { db: Database; log: Logger; metrics?: AuditMetrics }) {}

  /**
   * Records an event whatever its text holds (bounded here, made storable at the database edge).
   * It comes after the action it describes, which has happened and been answered: a failure to
   * record is logged at error level with the event and counted (rlncloud_audit_record_failures_total),
   * never turned into a failure of the action, which a client would retry.
   */
  async record(entry: AuditEntry): Promise<void> {
    const event: AuditEntry = {
      ...entry,
      actor: boundedAuditText(entry.actor),
      actorEmail: entry.actorEmail === undefined ? undefined : bounded(entry.actorEmail),
      sourceIp: bounded(entry.sourceIp),
      target: bounded(entry.target),
      nodeId: entry.nodeId === undefined ? undefined : bounded(entry.nodeId),
      details: boundedDetails(entry.details ?? {}) as Record<string, unknown>,
    };
    try {
      await insertAuditEvent(this.deps.db, event);
    } catch (err) {
      this.deps.metrics?.auditRecordFailed();
      this.deps.log.error({ err, audit: event }, 'could not record an audit event');
    }
  }

  /** Records an action on a node in its owner's trail (for callers that know only the node). */
  async recordOnNode(nodeId: string, entry: Omit<AuditEntry, 'userId' | 'target'>): Promise<void> {
    const userId = await findNodeOwner(this.deps.db, nodeId).catch(() => null);
    await this.record({ ...entry, userId, target: nodeId, nodeId });
  }

  /**
   * One page of a trail, newest first: the user's own (`userId`), or everyone's for the operator;
   * with `nodeIds` (a token limited to those nodes), only the events about them.
   */
  async list(filter: { userId?: string; nodeIds?: readonly string[] | null; limit: number; cursor?: string }): Promise<{ events: ApiAuditEvent[]; nextCursor: string | null }> {
    let beforeId: number | undefined;
    if (filter.cursor !== undefined) {
      beforeId = Number(decodeCursor('audit', filter.cursor, /^[1-9][0-9]{0,18}$/));
      const before = await findAuditEvent(this.deps.db, beforeId);
      if (!before || (filter.userId !== undefined && before.user_id !== filter.userId)) throw staleCursor();
    }
    const rows = await listAuditEvents(this.deps.db, { userId: filter.userId, nodeIds: filter.nodeIds, beforeId, limit: filter.limit + 1 });
    const page = pageOf(rows, filter.limit, (last) => encodeCursor('audit', String(last.id)));
    return { events: page.items.map(presentAuditEvent), nextCursor: page.nextCursor };
  }
}

function presentAuditEvent(e: AuditEventRow): ApiAuditEvent {
  return {
    id: String(e.id),
    at: e.at.toISOString(),
    actor: e.actor,
    actorUserId: e.actor_user_id,
    actorEmail: e.actor_email,
    sourceIp: e.source_ip,
    action: e.action,
    target: e.target,
    outcome: e.outcome,
    details: e.details,
  };
}
