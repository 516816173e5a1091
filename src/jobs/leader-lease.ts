// One replica at a time: a named lease in the database (db/leases.ts) that its holder renews and
// others take over once it expired. The holder acts only while its own clock says the lease is
// still good, counted from *before* the renewal was sent and ending a safety margin early, so its
// deadline always falls before the expiry the database recorded: by the time another replica can
// take the lease, this one has stopped acting on it (short of a single call already under way).
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { acquireLease, releaseLease } from '../db/leases.ts';
import type { Logger } from '../logger.ts';

/** A name for this process among the replicas: the pod's name on Kubernetes (its hostname), pid, and a nonce. */
export function newReplicaId(): string {
  return `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
}

export interface LeaderLeaseOptions {
  db: Database;
  name: string;
  holder: string;
  ttlMs: number;
  log: Logger;
}

export class LeaderLease {
  /** performance.now() until which this replica may act; 0 when it does not hold the lease. */
  private heldUntil = 0;

  constructor(private readonly opts: LeaderLeaseOptions) {}

  /** Whether this replica holds the lease now (no database round trip). */
  holds(): boolean {
    return performance.now() < this.heldUntil;
  }

  /** Takes or renews the lease; true while this replica holds it. */
  async renew(): Promise<boolean> {
    const { db, name, holder, ttlMs, log } = this.opts;
    const sentAt = performance.now();
    const wasHeld = this.holds();
    let row;
    try {
      row = await acquireLease(db, name, holder, ttlMs);
    } catch (err) {
      // The database did not answer: keep acting only until the deadline already earned.
      log.warn({ err, lease: name }, 'renewing a lease failed');
      return this.holds();
    }
    if (!row) {
      if (wasHeld) log.warn({ lease: name }, 'lost a lease to another replica');
      this.heldUntil = 0;
      return false;
    }
    this.heldUntil = sentAt + ttlMs * (1 - SAFETY_MARGIN);
    if (!wasHeld) log.info({ lease: name, holder }, 'took a lease: this replica does its work now');
    return true;
  }

  /** Renews when less than half of the lease is left; false when it is no longer held. */
  async ensure(): Promise<boolean> {
    if (this.heldUntil - performance.now() > this.opts.ttlMs / 2) return true;
    return this.renew();
  }

  /** Hands the lease back, so another replica takes over at once instead of after the TTL. */
  async release(): Promise<void> {
    if (this.heldUntil === 0) return;
    this.heldUntil = 0;
    await releaseLease(this.opts.db, this.opts.name, this.opts.holder);
    this.opts.log.info({ lease: this.opts.name }, 'handed a lease back');
  }
}

/** The share of the TTL given up at the end, for the clocks and the answer's trip back. */
const SAFETY_MARGIN = 0.2;
