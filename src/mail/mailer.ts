// Writing email: a message goes into the outbox in the caller's transaction (so it exists exactly
// when the change it tells about does), and with SMTP a job is enqueued in the same transaction to
// send it (mail/send-email-job.ts). Without SMTP (a laptop) the message stays in the outbox and
// its link is logged, so a developer can click it.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/database.ts';
import { insertOutboxMessage } from '../db/email-outbox.ts';
import { insertJob } from '../db/jobs.ts';
import type { Logger } from '../logger.ts';
import type { MailConfig } from './settings.ts';
import { SEND_EMAIL_JOB } from '../jobs/catalog.ts';
import { renderEmail, type EmailFacts, type EmailKind } from './templates.ts';

export class Mailer {
  constructor(private readonly deps: { config: MailConfig; publicUrl: string; log: Logger }) {}

  /** Whether messages leave the outbox (SMTP_URL is set). */
  get delivers(): boolean {
    return this.deps.config.smtpUrl !== undefined;
  }

  async enqueue(tx: Queryable, message: { kind: EmailKind; to: string; link: string; facts?: EmailFacts }): Promise<string> {
    const id = randomBytes(16).toString('hex');
    const rendered = renderEmail(message.kind, message.link, { serviceName: this.deps.config.serviceName, publicUrl: this.deps.publicUrl }, message.facts);
    await insertOutboxMessage(tx, { id, kind: message.kind, recipient: message.to, ...rendered });
    if (this.delivers) {
      await insertJob(tx, SEND_EMAIL_JOB.newJob({ v: 1, messageId: id }));
    } else {
      this.deps.log.info({ messageId: id, to: message.to, kind: message.kind, link: message.link }, 'email kept in the outbox (no SMTP_URL): open its link from here or `rln-cloud mail show`');
    }
    return id;
  }
}
