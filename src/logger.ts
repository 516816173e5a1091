// The service's logger: pino (what fastify uses), created once at start-up and passed in.
import pino from 'pino';

export type Logger = pino.Logger;

/** `fd` 1 logs to stdout (a service's usual place), 2 to stderr (keeps stdout for --json output). */
export function createLogger(level: string, fd: 1 | 2 = 1): Logger {
  return pino(
    { name: 'rln-cloud', level, redact: ['req.headers.authorization', '*.password', 'password'] },
    pino.destination({ fd, sync: false }),
  );
}
