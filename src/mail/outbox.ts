// Reading the outbox (the operator's `mail list|show`): on a laptop with no SMTP_URL, this is where
// a developer finds the verification and reset links.
import type { Database } from '../db/database.ts';
import { findOutboxMessage, listOutboxMessages, type OutboxRow } from '../db/email-outbox.ts';
import { AppError } from '../errors.ts';
import { normalEmail } from '../domain/email.ts';

const summary = (r: OutboxRow) => ({
  id: r.id,
  kind: r.kind,
  to: r.recipient,
  subject: r.subject,
  createdAt: r.created_at.toISOString(),
  sentAt: r.sent_at?.toISOString() ?? null,
});

export class Outbox {
  constructor(private readonly db: Database) {}

  /** The newest messages first, optionally to one address. */
  async list(filter: { to?: string; limit: number }) {
    const rows = await listOutboxMessages(this.db, { recipient: filter.to === undefined ? undefined : normalEmail(filter.to), limit: filter.limit });
    return { messages: rows.map(summary) };
  }

  /** One message with its plain-text body (its links). */
  async show(id: string) {
    const row = /^[0-9a-f]{32}$/.test(id) ? await findOutboxMessage(this.db, id) : undefined;
    if (!row) throw new AppError('not_found', `no message ${id.slice(0, 64)} in the outbox (rln-cloud mail list)`);
    return { ...summary(row), text: row.text_body };
  }
}
