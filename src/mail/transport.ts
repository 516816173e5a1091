// The one SMTP client (nodemailer), chosen once at start-up from SMTP_URL.
import { createTransport } from 'nodemailer';

export interface OutgoingEmail {
  messageId: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface EmailTransport {
  send(message: OutgoingEmail): Promise<void>;
  close(): void;
}

export function smtpTransport(smtpUrl: string): EmailTransport {
  // A pool keeps a connection open between messages instead of a handshake each.
  const transporter = createTransport(`${smtpUrl}${smtpUrl.includes('?') ? '&' : '?'}pool=true`);
  return {
    async send(m) {
      await transporter.sendMail({ messageId: m.messageId, from: m.from, to: m.to, subject: m.subject, text: m.text, html: m.html });
    },
    close: () => transporter.close(),
  };
}
