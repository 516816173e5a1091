// The named leases replicas share (reconcile loop): one holder at a time, renewal, hand-back and
// take-over after expiry, against a real database; and a worker shutting down hands its jobs back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { findLease } from '../../src/db/leases.ts';
import { claimJob, insertJob } from '../../src/db/jobs.ts';
import { LeaderLease } from '../../src/jobs/leader-lease.ts';
import { JobWorker } from '../../src/jobs/worker.ts';
import { createLogger } from '../../src/logger.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';

const log = createLogger('silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`leases on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
  });
  afterAll(() => close());

  const lease = (name: string, holder: string, ttlMs: number) => new LeaderLease({ db, name, holder, ttlMs, log });

  it('has one holder at a time; the other takes over once it is handed back', async () => {
    const a = lease('one-holder', 'replica-a', 60_000);
    const b = lease('one-holder', 'replica-b', 60_000);
    expect(await a.renew()).toBe(true);
    expect(await b.renew()).toBe(false);
    expect([a.holds(), b.holds()]).toEqual([true, false]);
    // Renewal keeps it, and keeps when it was first taken.
    const first = (await findLease(db, 'one-holder'))!;
    expect(await a.renew()).toBe(true);
    const renewed = (await findLease(db, 'one-holder'))!;
    expect(renewed.holder).toBe('replica-a');
    expect(renewed.acquired_at.getTime()).toBe(first.acquired_at.getTime());
    expect(renewed.expires_at.getTime()).toBeGreaterThanOrEqual(first.expires_at.getTime());
    await a.release();
    expect(a.holds()).toBe(false);
    expect(await b.renew()).toBe(true);
    expect((await findLease(db, 'one-holder'))!.holder).toBe('replica-b');
    // Handing back a lease one does not hold changes nothing.
    await a.release();
    expect((await findLease(db, 'one-holder'))!.holder).toBe('replica-b');
  });

  it('is taken over after its TTL when the holder stops renewing (a dead replica), and the holder knows it lost it', async () => {
    const a = lease('expiry', 'replica-a', 400);
    const b = lease('expiry', 'replica-b', 400);
    expect(await a.renew()).toBe(true);
    expect(await b.renew()).toBe(false);
    await sleep(450);
    // a's own clock already told it to stop acting, before b could take over.
    expect(a.holds()).toBe(false);
    expect(await b.renew()).toBe(true);
    expect(await a.renew()).toBe(false);
    expect(await a.ensure()).toBe(false);
  });

  it('stops acting before the database would let another replica in (its deadline ends early)', async () => {
    const a = lease('early', 'replica-a', 1_000);
    expect(await a.renew()).toBe(true);
    await sleep(850);
    expect(a.holds()).toBe(false);
    // The row itself has not expired yet: nobody else could have taken it while a still acted.
    const [row] = await db.query<{ expired: boolean }>(`SELECT expires_at < now() AS expired FROM leases WHERE name = 'early'`);
    expect(row!.expired).toBe(false);
  });

  it('ensure() renews only when half the lease is gone', async () => {
    const a = lease('ensure', 'replica-a', 600);
    expect(await a.renew()).toBe(true);
    const before = (await findLease(db, 'ensure'))!.expires_at.getTime();
    expect(await a.ensure()).toBe(true);
    expect((await findLease(db, 'ensure'))!.expires_at.getTime()).toBe(before);
    await sleep(350);
    expect(await a.ensure()).toBe(true);
    expect((await findLease(db, 'ensure'))!.expires_at.getTime()).toBeGreaterThan(before);
  });
});

describe(`a job worker shutting down on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
  });
  afterAll(() => close());

  it('waits for a job until the deadline, then hands it back so another worker claims it at once', async () => {
    let release!: () => void;
    const hanging = new Promise<void>((r) => (release = r));
    let started = false;
    const worker = new JobWorker({
      db, log, concurrency: 1, pollIntervalMs: 50,
      definitions: [{ kind: 'slow', maxAttempts: 3, leaseMs: 60_000, backoffMs: () => 10, parse: (p) => p, handle: async () => {
        started = true;
        await hanging;
      } }],
    });
    const job = (await insertJob(db, { kind: 'slow', payload: {}, maxAttempts: 3 }))!;
    worker.start();
    while (!started) await sleep(20);
    // Its lease is a minute: without the hand-back nobody could claim it for that long.
    expect(await claimJob(db, ['slow'], 60_000)).toBeUndefined();
    const t0 = Date.now();
    await worker.stop(Date.now() + 300);
    expect(Date.now() - t0).toBeLessThan(5_000);
    const taken = await claimJob(db, ['slow'], 60_000);
    expect(taken?.id).toBe(job.id);
    expect(taken?.attempts).toBe(2);
    // The first worker's handler ending late records nothing over the new owner's claim.
    release();
    await sleep(100);
    const [row] = await db.query<{ state: string }>('SELECT state FROM jobs WHERE id = $1', [job.id]);
    expect(row!.state).toBe('running');
  });

  it('stops at once when its jobs finish before the deadline', async () => {
    const worker = new JobWorker({
      db, log, concurrency: 1, pollIntervalMs: 50,
      definitions: [{ kind: 'quick', maxAttempts: 1, leaseMs: 60_000, backoffMs: () => 10, parse: (p) => p, handle: async () => { await sleep(100); } }],
    });
    const job = (await insertJob(db, { kind: 'quick', payload: {}, maxAttempts: 1 }))!;
    worker.start();
    await sleep(50);
    await worker.stop(Date.now() + 30_000);
    const [row] = await db.query<{ state: string }>('SELECT state FROM jobs WHERE id = $1', [job.id]);
    expect(row!.state).toBe('done');
  });
});
