// A pass over items that one replica at a time makes (a lease), every interval: the meters that
// ask each running node something (nodes/upkeep/storage-meter.ts, vss-pending-meter.ts). Items
// are taken a few at a time (`concurrency`); the lease is checked again before each item, so a
// replica that lost it mid-pass stops there. A failing item is for `each` to report: the pass
// goes on with the next.
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { BackgroundLoop } from './background-loop.ts';
import { LeaderLease } from './leader-lease.ts';

const LEASE_TTL_MS = 60_000;

export interface LeasedPassOptions<T> {
  db: Database;
  /** The lease's name: one holder at a time across the replicas. */
  lease: string;
  replicaId: string;
  /** What a pass does, in a few words (logged when one fails, and when the lease is not handed back). */
  name: string;
  /** The pause between two passes. */
  intervalMs: number;
  /** Items handled at once. */
  concurrency: number;
  /** A pass's items, read when it begins. */
  items: () => T[] | Promise<T[]>;
  each: (item: T) => Promise<void>;
  log: Logger;
}

export class LeasedPass<T> {
  private readonly loop: BackgroundLoop;
  private readonly lease: LeaderLease;

  constructor(private readonly opts: LeasedPassOptions<T>) {
    this.lease = new LeaderLease({ db: opts.db, name: opts.lease, holder: opts.replicaId, ttlMs: LEASE_TTL_MS, log: opts.log });
    this.loop = new BackgroundLoop({ name: opts.name, intervalMs: opts.intervalMs, log: opts.log, run: () => this.runOnce() });
  }

  start() {
    this.loop.start();
  }

  /** Ends the loop, then hands the lease back so another replica takes over at once. */
  async stop() {
    await this.loop.stop();
    await this.lease.release().catch((err) => this.opts.log.warn({ err }, `handing back the lease of the ${this.opts.name} failed; it expires by itself`));
  }

  /** One pass, while this replica holds the lease. */
  async runOnce(): Promise<void> {
    if (!(await this.lease.ensure())) return;
    const queue = [...(await this.opts.items())];
    const worker = async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        if (this.loop.stopping || !(await this.lease.ensure())) return;
        await this.opts.each(item);
      }
    };
    await Promise.all(Array.from({ length: this.opts.concurrency }, worker));
  }
}
