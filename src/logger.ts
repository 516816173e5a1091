// The service's logger: pino (what fastify uses), created once at start-up and passed in. JSON
// lines (for log collectors), or readable lines when a person is watching a terminal.
import { isatty } from 'node:tty';
import pino from 'pino';
import { prettyDestination } from './pretty-log.ts';

export type Logger = pino.Logger;

/** `auto`: readable lines on a terminal, JSON otherwise (LOG_FORMAT). */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * The logger's options: what it is named and what it never writes (credentials, passwords and
 * recovery phrases, wherever a caller puts them in a log object). Exported for the tests that
 * read what the service logs.
 */
export const loggerOptions = (level: string) => ({
  name: 'rln-cloud',
  level,
  redact: ['req.headers.authorization', '*.password', 'password', '*.mnemonic', 'mnemonic', '*.bitcoind_rpc_password', '*.bitcoindRpcPassword'],
});

/** `fd` 1 logs to stdout (a service's usual place), 2 to stderr (keeps stdout for --json output). */
export function createLogger(level: string, fd: 1 | 2 = 1, format: LogFormat = 'json'): Logger {
  const options = loggerOptions(level);
  const pretty = format === 'pretty' || (format === 'auto' && isatty(fd));
  if (pretty) return pino(options, prettyDestination(fd === 1 ? process.stdout : process.stderr));
  return pino(options, pino.destination({ fd, sync: false }));
}
