// A real SMTP server on loopback (smtp-server) that keeps what it receives, parsed (mailparser), so
// a test can read the link from the message the service sent.
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';
import type { AddressInfo } from 'node:net';

export interface ReceivedEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
}

export interface TestSmtpServer {
  url: string;
  received: ReceivedEmail[];
  /** The messages to `to` so far (waits until there are at least `count`). */
  waitFor(to: string, count?: number, timeoutMs?: number): Promise<ReceivedEmail[]>;
  /** Stops answering: the service's deliveries fail until restarted on the same port. */
  stop(): Promise<void>;
}

export async function startSmtpServer(port = 0): Promise<TestSmtpServer> {
  const received: ReceivedEmail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    // No TLS on loopback: a test server has no certificate the client would trust.
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          for (const rcpt of session.envelope.rcptTo) {
            received.push({
              to: rcpt.address.toLowerCase(),
              subject: mail.subject ?? '',
              text: mail.text ?? '',
              html: typeof mail.html === 'string' ? mail.html : '',
              messageId: mail.messageId ?? '',
            });
          }
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${actual}`,
    received,
    async waitFor(to, count = 1, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const mine = received.filter((m) => m.to === to.toLowerCase());
        if (mine.length >= count) return mine;
        if (Date.now() > deadline) throw new Error(`${count} message(s) to ${to} did not arrive; got ${mine.length}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The first link in a message's text that leads to `path` under the service, and its secret. */
export function linkIn(email: ReceivedEmail, path: string): { url: string; token: string | undefined } {
  const url = email.text.split(/\s+/).find((w) => w.startsWith('http') && new URL(w).pathname === path);
  if (!url) throw new Error(`no ${path} link in: ${email.text}`);
  return { url, token: new URL(url).hash.match(/token=([A-Za-z0-9_-]+)/)?.[1] };
}
