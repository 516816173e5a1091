// Runs durable jobs: claims due jobs from the database, runs their handlers with a lease that is
// renewed while they work, retries with backoff, and gives up after the job's last attempt.
// A crash at any point leaves the job claimable again once its lease ends.
import type { Database } from '../db/database.ts';
import { claimJob, completeJob, extendLease, failJob, type JobRow } from '../db/jobs.ts';
import type { Logger } from '../logger.ts';

export interface JobDefinition<P = any> {
  kind: string;
  maxAttempts: number;
  /** How long a worker owns a claimed job without renewing; renewed every third of it. */
  leaseMs: number;
  /** Delay before attempt `attempt + 1` after attempt `attempt` failed. */
  backoffMs(attempt: number): number;
  /** Validates and upgrades a stored payload; throws on a payload this code cannot handle. */
  parse(payload: unknown): P;
  handle(payload: P, job: JobRow): Promise<void>;
  /** Called once when the last attempt failed: record the failure where users see it. */
  onGiveUp?(payload: P, error: Error): Promise<void>;
}

export interface JobWorkerOptions {
  db: Database;
  definitions: JobDefinition[];
  concurrency: number;
  pollIntervalMs: number;
  log: Logger;
}

export class JobWorker {
  private readonly byKind: Map<string, JobDefinition>;
  private running = new Set<Promise<void>>();
  private stopped = true;
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly opts: JobWorkerOptions) {
    this.byKind = new Map(opts.definitions.map((d) => [d.kind, d]));
  }

  start() {
    this.stopped = false;
    this.loop = this.run();
  }

  /** Looks for work now instead of at the next poll (called after enqueueing in-process). */
  wake() {
    this.wakeUp?.();
  }

  /** Stops claiming, then waits for the jobs in hand to finish. */
  async stop() {
    this.stopped = true;
    this.wake();
    await this.loop;
    await Promise.allSettled([...this.running]);
  }

  private async run() {
    const kinds = [...this.byKind.keys()];
    const maxLease = Math.max(...this.opts.definitions.map((d) => d.leaseMs));
    while (!this.stopped) {
      let claimed = false;
      while (!this.stopped && this.running.size < this.opts.concurrency) {
        let job: JobRow | undefined;
        try {
          job = await claimJob(this.opts.db, kinds, maxLease);
        } catch (err) {
          this.opts.log.error({ err }, 'claiming a job failed');
        }
        if (!job) break;
        claimed = true;
        const p = this.execute(job).finally(() => {
          this.running.delete(p);
          this.wake();
        });
        this.running.add(p);
      }
      if (this.stopped) break;
      // Sleep until woken (a job finished, or one was enqueued here) or the poll interval passes.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, claimed && this.running.size < this.opts.concurrency ? 0 : this.opts.pollIntervalMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  private async execute(job: JobRow) {
    const def = this.byKind.get(job.kind)!;
    const log = this.opts.log.child({ job: job.id, kind: job.kind, attempt: job.attempts });
    const renew = setInterval(() => {
      extendLease(this.opts.db, job.id, def.leaseMs).catch((err) => log.warn({ err }, 'lease renewal failed'));
    }, def.leaseMs / 3);
    let payload: unknown;
    try {
      payload = def.parse(job.payload);
      await def.handle(payload, job);
      await completeJob(this.opts.db, job.id);
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      const last = job.attempts >= job.max_attempts || payload === undefined;
      log.warn({ err: err.message }, last ? 'job failed for good' : 'job attempt failed; will retry');
      try {
        await failJob(this.opts.db, job.id, err.message, last ? null : def.backoffMs(job.attempts));
        if (last && payload !== undefined) await def.onGiveUp?.(payload, err);
      } catch (recordErr) {
        log.error({ err: recordErr }, 'recording a job failure failed; the lease will expire and it runs again');
      }
    } finally {
      clearInterval(renew);
    }
  }
}

export const exponentialBackoff = (baseMs: number, maxMs: number) => (attempt: number) =>
  Math.min(maxMs, baseMs * 2 ** (attempt - 1)) * (0.8 + Math.random() * 0.4);
