// devnode's log: one line per event on stdout, `<ISO timestamp> <LEVEL> <message>`. The runtime
// appends stdout to the node's daemon.log, which operators read and the service tails on failure.
// Callers pass only method, path, status and state names: never passwords or request bodies.

export type LogLevel = 'INFO' | 'WARN' | 'ERROR';

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export function createLogger(write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  const emit = (level: LogLevel, message: string) =>
    // Newlines are flattened so one event is always one line, even for odd error messages.
    write(`${new Date().toISOString()} ${level} ${message.replace(/[\r\n]+/g, ' ')}\n`);
  return {
    info: (message) => emit('INFO', message),
    warn: (message) => emit('WARN', message),
    error: (message) => emit('ERROR', message),
  };
}
