// Configuration of email delivery (mail/), read by config.ts with the rest of the environment.
import { integer, matching, text } from '../env/formats.ts';
import { readEnv, variable, type Env } from '../env/variable.ts';

export interface MailConfig {
  /** smtp:// or smtps:// with any credentials in it; undefined: messages stay in the outbox (a laptop). */
  smtpUrl: string | undefined;
  /** The From header of every message. */
  from: string;
  /** The service's name as messages say it. */
  serviceName: string;
  /** Days an outbox message is kept before the cleanup deletes it (mail/outbox-janitor.ts). */
  retentionDays: number;
}

export const MAIL_VARIABLES = {
  // Unset on a laptop: nothing leaves the machine, and `rln-cloud mail list|show` and the log show
  // each message's link. Sign-up refuses to open to the public without it (config.ts).
  smtpUrl: variable('SMTP_URL', matching(/^smtps?:\/\/[^\s]+$/, 'be an smtp:// or smtps:// URL'), {
    unset: 'unset: messages stay in the outbox (`rln-cloud mail list`), their links in the log',
    doc: 'the SMTP server email goes out through (nodemailer), credentials in the URL: `smtps://user:pass@smtp.example:465` or `smtp://...:587` (STARTTLS); required for `SIGNUP_MODE=open` or `approval` with PostgreSQL or on Kubernetes',
    secret: true,
  }),
  from: variable('MAIL_FROM', text(), {
    default: 'RLN Cloud <no-reply@localhost>',
    doc: 'the `From` of every message (verification, password reset, sign-up notices); use an address of your domain that your SMTP server may send as',
  }),
  serviceName: variable('SERVICE_NAME', text(), {
    default: 'RLN Cloud',
    doc: "the service's name in email subjects and bodies",
  }),
  // A month: long enough to answer "did you send me that?"; at least two days, since the once-a-day
  // sign-up attempt notice is decided from the outbox's last day.
  retentionDays: variable('MAIL_RETENTION_DAYS', integer(2, 3650), {
    default: '30',
    doc: 'days an outbox message (sent, or never sent) is kept, for `rln-cloud mail list`, before a cleanup every replica runs deletes it (docs/ACCOUNTS.md "Email")',
  }),
};

export function readMailConfig(env: Env, problems: string[]): MailConfig {
  const values = readEnv(MAIL_VARIABLES, env, problems);
  return { smtpUrl: values.smtpUrl, from: values.from, serviceName: values.serviceName, retentionDays: values.retentionDays };
}
