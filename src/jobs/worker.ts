// Runs durable jobs: claims due jobs from the database, runs their handlers with a lease that is
// renewed while they work, retries with backoff, and gives up after the job's last attempt.
// A crash at any point leaves the job claimable again once its lease ends.
import type { Database } from '../db/database.ts';
import { claimJob, completeJob, extendLease, failJob, releaseJobLeases, type JobRow } from '../db/jobs.ts';
import type { Logger } from '../logger.ts';
import { BackgroundLoop } from './background-loop.ts';

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
  /** Told of every job given up on (metrics/); absent: nobody counts. */
  metrics?: JobMetrics;
}

/** What the worker reports; implemented by metrics/service-metrics.ts. */
export interface JobMetrics {
  /** A job failed its last attempt (or its payload could not be read) and will not run again. */
  jobGivenUp(kind: string): void;
}

export class JobWorker {
  private readonly byKind: Map<string, JobDefinition>;
  private readonly kinds: string[];
  private readonly maxLeaseMs: number;
  /** The jobs in hand, by id. */
  private readonly running = new Map<number, Promise<void>>();
  /** Set once stop() handed the jobs in hand back: they are no longer renewed or recorded from here. */
  private handedBack = false;
  // Woken when a job enqueued in this process committed (the 'jobs' commit signal) or one finished
  // (a slot is free); otherwise
  // polls, which is how jobs enqueued by other processes and retries that come due are found.
  private readonly loop: BackgroundLoop;

  constructor(private readonly opts: JobWorkerOptions) {
    this.byKind = new Map(opts.definitions.map((d) => [d.kind, d]));
    this.kinds = [...this.byKind.keys()];
    this.maxLeaseMs = Math.max(...opts.definitions.map((d) => d.leaseMs));
    this.loop = new BackgroundLoop({
      name: 'claiming a job',
      intervalMs: opts.pollIntervalMs,
      log: opts.log,
      run: () => this.claimDueJobs(),
    });
    opts.db.commitSignals.on('jobs', () => this.wake());
  }

  start() {
    this.loop.start();
  }

  /** Looks for work now instead of at the next poll. */
  wake() {
    this.loop.wake();
  }

  /**
   * Stops claiming, then waits for the jobs in hand to finish; any still running at `deadline`
   * (epoch ms) is handed back (its lease ends now), so another replica takes it over at once
   * instead of after its lease, and this process can exit. Without a deadline it waits for all.
   */
  async stop(deadline?: number) {
    await this.loop.stop();
    const allDone = Promise.allSettled([...this.running.values()]).then(() => true);
    if (deadline === undefined) {
      await allDone;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    });
    const finished = await Promise.race([allDone, timedOut]).finally(() => clearTimeout(timer));
    if (finished || this.running.size === 0) return;
    const ids = [...this.running.keys()];
    this.handedBack = true;
    await releaseJobLeases(this.opts.db, ids);
    this.opts.log.warn({ jobs: ids }, 'jobs still running at shutdown were handed back to the other replicas');
  }

  /** Fills the free slots with due jobs; a job that finishes frees its slot and wakes the loop. */
  private async claimDueJobs() {
    while (!this.loop.stopping && this.running.size < this.opts.concurrency) {
      const job = await claimJob(this.opts.db, this.kinds, this.maxLeaseMs);
      if (!job) return;
      const p = this.execute(job).finally(() => {
        this.running.delete(job.id);
        this.wake();
      });
      this.running.set(job.id, p);
    }
  }

  private async execute(job: JobRow) {
    const def = this.byKind.get(job.kind)!;
    const log = this.opts.log.child({ job: job.id, kind: job.kind, attempt: job.attempts });
    const renew = setInterval(() => {
      if (this.handedBack) return;
      extendLease(this.opts.db, job.id, def.leaseMs).catch((err) => log.warn({ err }, 'lease renewal failed'));
    }, def.leaseMs / 3);
    let payload: unknown;
    try {
      payload = def.parse(job.payload);
      await def.handle(payload, job);
      if (this.handedBack) return;
      await completeJob(this.opts.db, job.id);
    } catch (e) {
      if (this.handedBack) return;
      const err = e instanceof Error ? e : new Error(String(e));
      const last = job.attempts >= job.max_attempts || payload === undefined;
      log.warn({ err: err.message }, last ? 'job failed for good' : 'job attempt failed; will retry');
      try {
        await failJob(this.opts.db, job.id, err.message, last ? null : def.backoffMs(job.attempts));
        if (last) this.opts.metrics?.jobGivenUp(job.kind);
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
