// How many password hashes run at once in this process, and how many may wait. scrypt costs about
// 40 ms of CPU on libuv's threadpool, which the whole process shares (file reads, DNS, zlib): an
// unbounded burst of sign-ins or invitation accepts filled it and stalled the API (issue #36). A
// few run, a few wait their turn in order, the rest are refused at once with a clear 503 rather
// than queued without bound. One gate per process, like the threadpool it protects.
import { AppError } from '../errors.ts';
import type { PasswordHashingConfig } from './settings.ts';

/** What a refused request is told: a hash takes tens of milliseconds, a second is plenty. */
const RETRY_AFTER_SECONDS = 1;

export class PasswordGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Hashes started and hashes refused since the process started (tests and the bench read them). */
  started = 0;
  refused = 0;

  constructor(private limits: PasswordHashingConfig) {}

  /** New limits for hashes from now on (the serving process sets them from its configuration). */
  configure(limits: PasswordHashingConfig) {
    this.limits = limits;
  }

  /** Runs `hash` when a slot is free; throws 503 server_busy when the queue is full too. */
  async run<T>(hash: () => Promise<T>): Promise<T> {
    if (this.running >= this.limits.concurrency) {
      if (this.waiting.length >= this.limits.queue) {
        this.refused++;
        throw new AppError('server_busy', 'too many passwords are being checked at once; try again in a second', {
          retryAfterSeconds: RETRY_AFTER_SECONDS,
        });
      }
      // The slot is handed over by the hash that finishes, so the count never drops in between.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    this.started++;
    try {
      return await hash();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
