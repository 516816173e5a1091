// The durable job that sends one outbox message over SMTP. At least once: a crash after the SMTP
// server took the message and before it was marked sent sends it again, with the same Message-ID.
// One sender per message across replicas: the job queue's claim (FOR UPDATE SKIP LOCKED, a lease).
import type { Database } from '../db/database.ts';
import { findOutboxMessage, markOutboxMessageSent } from '../db/email-outbox.ts';
import { exponentialBackoff, type JobDefinition } from '../jobs/worker.ts';
import type { Logger } from '../logger.ts';
import type { EmailTransport } from './transport.ts';
import { SEND_EMAIL_JOB, type SendEmailJobPayload } from '../jobs/catalog.ts';

/** The Message-ID header of an outbox message: the same on every attempt, so a resend is recognisable. */
export const messageIdOf = (id: string, publicUrl: string) => `<${id}@${new URL(publicUrl).hostname || 'localhost'}>`;

export function sendEmailJob(deps: { db: Database; transport: EmailTransport; from: string; publicUrl: string; log: Logger }): JobDefinition<SendEmailJobPayload> {
  return {
    ...SEND_EMAIL_JOB,
    leaseMs: 60_000,
    backoffMs: exponentialBackoff(5_000, 4 * 3_600_000),
    async handle(p) {
      const row = await findOutboxMessage(deps.db, p.messageId);
      // Sent by an earlier attempt whose completion was not recorded: once is enough.
      if (!row || row.sent_at) return;
      await deps.transport.send({
        messageId: messageIdOf(row.id, deps.publicUrl),
        from: deps.from,
        to: row.recipient,
        subject: row.subject,
        text: row.text_body,
        html: row.html_body,
      });
      await markOutboxMessageSent(deps.db, row.id);
      deps.log.info({ messageId: row.id, kind: row.kind }, 'email sent');
    },
    async onGiveUp(p, error) {
      deps.log.error({ messageId: p.messageId, err: error.message }, 'an email could not be sent; it stays in the outbox (`rln-cloud mail show`)');
    },
  };
}
