// Notification emails (issue #45): a node FAILED, a backup failed, the account at 80% and at 100%
// of its plan's monthly API calls. They go to the account's owner and admins whose address is
// verified, each by their own preferences (every kind on until they turn it off); developers and
// viewers get none (docs/ACCOUNTS.md "Notifications"). Each event is notified once: its key is
// claimed (db/notifications.ts) in the transaction that writes its emails to the outbox, so a
// retried job or a second replica finds it taken and writes nothing.
import type { Database, Queryable } from '../db/database.ts';
import { claimNotification, findNoticeEvent, findNotificationRecipients, listNotificationOptOuts, setNotificationOptOuts } from '../db/notifications.ts';
import { NOTIFICATION_FIELDS, type NotificationField, type NotificationKind } from '../domain/notifications.ts';
import type { Logger } from '../logger.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { EmailFacts } from '../mail/templates.ts';

export type NotificationPreferences = Record<NotificationField, boolean>;

/** An account's month reaching a share of its plan's API calls (usage/api-call-meter.ts reports it). */
export interface ApiCallThreshold {
  accountId: string;
  /** YYYY-MM (UTC). */
  month: string;
  calls: number;
  limit: number;
  percent: 80 | 100;
}

export class Notifications {
  constructor(
    private readonly deps: {
      db: Database;
      mailer: Pick<Mailer, 'enqueue'>;
      publicUrl: string;
      /** Node pages are under it (CONNECT_PAGE_URL): a notice about a node links to its page. */
      connectPageUrl: string;
      log: Logger;
    },
  ) {}

  /** A person's preferences, every kind named. */
  async preferences(userId: string): Promise<NotificationPreferences> {
    const off = new Set(await listNotificationOptOuts(this.deps.db, userId));
    return Object.fromEntries(Object.entries(NOTIFICATION_FIELDS).map(([field, kind]) => [field, !off.has(kind)])) as NotificationPreferences;
  }

  /** Sets the kinds named; the others stay as they are. */
  async setPreferences(userId: string, changes: Partial<NotificationPreferences>): Promise<NotificationPreferences> {
    const byKind: Record<string, boolean> = {};
    for (const [field, enabled] of Object.entries(changes)) {
      if (enabled !== undefined) byKind[NOTIFICATION_FIELDS[field as NotificationField]] = enabled;
    }
    await setNotificationOptOuts(this.deps.db, userId, byKind);
    return this.preferences(userId);
  }

  /** The notice of a node event the database queued (migrations 0036 and 0045): a node FAILED or STORAGE_LOST, a backup failed. */
  async notifyNodeEvent(eventId: number): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      // Gone with its node (destroyed and purged): there is nothing left to tell.
      const event = await findNoticeEvent(tx, eventId);
      if (!event) return;
      const link = `${this.deps.connectPageUrl.replace(/\/+$/, '')}/${event.node_id}`;
      const facts: EmailFacts = { node: event.node_name, nodeId: event.node_id };
      if (event.event_type === 'NODE_BACKUP_FAILED') {
        const reason = String(event.details.reason ?? event.details.code ?? 'no reason was given');
        await this.send(tx, `node-event:${eventId}`, event.account_id, 'backup-failed', link, { ...facts, backupId: String(event.details.backupId ?? ''), reason });
      } else if (event.event_type === 'NODE_STORAGE_LOST') {
        const reason = String(event.details.reason ?? "the node's volume is gone");
        await this.send(tx, `node-event:${eventId}`, event.account_id, 'node-storage-lost', link, { ...facts, reason });
      } else {
        await this.send(tx, `node-event:${eventId}`, event.account_id, 'node-failed', link, facts);
      }
    });
  }

  /** The account reached 80% or 100% of its month's API calls: told once per account, month and threshold. */
  async notifyApiCalls(t: ApiCallThreshold): Promise<void> {
    const kind: NotificationKind = t.percent === 100 ? 'api-calls-100' : 'api-calls-80';
    await this.deps.db.transaction((tx) =>
      this.send(tx, `api-calls:${t.accountId}:${t.month}:${t.percent}`, t.accountId, kind, `${this.deps.publicUrl}/account`, {
        used: String(t.calls),
        limit: String(t.limit),
        month: t.month,
      }),
    );
  }

  private async send(tx: Queryable, key: string, accountId: string, kind: NotificationKind, link: string, facts: EmailFacts) {
    if (!(await claimNotification(tx, key))) return;
    const recipients = await findNotificationRecipients(tx, accountId, kind);
    for (const to of recipients) await this.deps.mailer.enqueue(tx, { kind, to, link, facts });
    this.deps.log.info({ accountId, kind, key, recipients: recipients.length }, 'notification written to the outbox');
  }
}
