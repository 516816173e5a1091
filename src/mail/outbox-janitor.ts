// The cleanup of what email leaves behind (docs/ACCOUNTS.md "Email"): outbox messages after
// MAIL_RETENTION_DAYS (sent ones are bodiless records by then, unsent ones never will be sent: their
// job gave up within a day, or there is no SMTP_URL), one-time links a day after they were used or
// expired, and the keys of notified events after NOTICE_KEY_DAYS. Every statement deletes only what
// is past its age, so every replica may run it.
import type { Database } from '../db/database.ts';
import { deleteDeadEmailLinks } from '../db/email-links.ts';
import { deleteOldOutboxMessages } from '../db/email-outbox.ts';
import { deleteOldNotificationKeys } from '../db/notifications.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';
import type { Logger } from '../logger.ts';

const BATCH = 1000;
// A dead link is kept a day: a person who just used or missed one is answered by the same row, not its absence.
const DEAD_LINK_GRACE_HOURS = 24;
// Past any month's end: a month's 80% and 100% notices must stay claimed while the month lasts.
export const NOTICE_KEY_DAYS = 62;

export class OutboxJanitor {
  private readonly loop: BackgroundLoop;

  constructor(private readonly opts: { db: Database; retentionDays: number; log: Logger; intervalMs?: number }) {
    this.loop = new BackgroundLoop({ name: 'email cleanup', intervalMs: opts.intervalMs ?? 3_600_000, log: opts.log, run: () => this.sweep() });
  }

  start() {
    this.loop.start();
  }

  async stop() {
    await this.loop.stop();
  }

  /** One pass; answers what it deleted. */
  async sweep() {
    const { db, retentionDays } = this.opts;
    const deleted = {
      messages: await this.inBatches(() => deleteOldOutboxMessages(db, retentionDays, BATCH)),
      links: await this.inBatches(() => deleteDeadEmailLinks(db, DEAD_LINK_GRACE_HOURS, BATCH)),
      noticeKeys: await deleteOldNotificationKeys(db, NOTICE_KEY_DAYS),
    };
    if (deleted.messages + deleted.links + deleted.noticeKeys > 0) this.opts.log.info(deleted, 'deleted old email messages, dead links and notice keys');
    return deleted;
  }

  private async inBatches(deleteBatch: () => Promise<number>) {
    let total = 0;
    for (;;) {
      const n = await deleteBatch();
      total += n;
      if (n < BATCH || this.loop.stopping) return total;
    }
  }
}
