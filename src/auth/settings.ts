// Configuration of password hashing (auth/password-gate.ts), read by config.ts with the rest of the
// environment.
import { integer } from '../env/formats.ts';
import { readEnv, variable, type Env } from '../env/variable.ts';

export interface PasswordHashingConfig {
  /** Hashes (scrypt) running at once in this process. */
  concurrency: number;
  /** Hashes waiting for a turn; past it a request is refused (503 server_busy, Retry-After). */
  queue: number;
}

export const PASSWORD_HASHING_VARIABLES = {
  // scrypt runs on libuv's threadpool (4 threads unless UV_THREADPOOL_SIZE says otherwise), which
  // file reads, DNS and zlib share, and each hash is a core's worth of CPU for tens of milliseconds:
  // one at a time leaves the pool room and the event loop a core on a 2-core replica (the bench's
  // password-hashing section), and still checks some 25 passwords a second.
  concurrency: variable('PASSWORD_HASH_CONCURRENCY', integer(1, 64), {
    default: '1',
    doc: 'password hashes (scrypt, about 40 ms of CPU each) running at once per replica, for sign-in, invitation accept and set-password; keep it below `UV_THREADPOOL_SIZE` (default 4)',
  }),
  // A short wait is better than a refusal, an unbounded one is how a burst stalls the API.
  queue: variable('PASSWORD_HASH_QUEUE', integer(0, 10_000), {
    default: '8',
    doc: 'password hashes waiting for a turn per replica; past it sign-ins and accepts are refused with 503 `server_busy` and `Retry-After`',
  }),
};

export function readPasswordHashingConfig(env: Env, problems: string[]): PasswordHashingConfig {
  const values = readEnv(PASSWORD_HASHING_VARIABLES, env, problems);
  return { concurrency: values.concurrency, queue: values.queue };
}
