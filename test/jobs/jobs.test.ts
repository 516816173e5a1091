// The durable job queue against a real database: retries with backoff, giving up, singleton keys,
// and a crashed worker's job taken over when its lease ends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { claimJob, insertJob } from '../../src/db/jobs.ts';
import { JobWorker, type JobDefinition } from '../../src/jobs/worker.ts';
import { createLogger } from '../../src/logger.ts';
import { migrate } from '../../src/db/migrate.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';

const log = createLogger('silent');

function definition(kind: string, handle: JobDefinition['handle'], extra: Partial<JobDefinition> = {}): JobDefinition {
  return { kind, maxAttempts: 3, leaseMs: 5_000, backoffMs: () => 10, parse: (p) => p, handle, ...extra };
}

async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe(`job queue on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
  });
  afterAll(() => close());

  const stateOf = async (id: number) => (await db.query<{ state: string; attempts: number; last_error: string | null }>('SELECT state, attempts, last_error FROM jobs WHERE id = $1', [id]))[0]!;

  it('migrations are idempotent', async () => {
    expect(await migrate(db)).toEqual([]);
  });

  it('retries a failing job and completes it when an attempt succeeds', async () => {
    let calls = 0;
    const worker = new JobWorker({
      db, log, concurrency: 2, pollIntervalMs: 50,
      definitions: [definition('flaky', async () => {
        if (++calls < 3) throw new Error(`attempt ${calls} failed`);
      })],
    });
    const job = (await insertJob(db, { kind: 'flaky', payload: {}, maxAttempts: 3 }))!;
    worker.start();
    await until(async () => (await stateOf(job.id)).state === 'done');
    await worker.stop();
    expect(calls).toBe(3);
    expect(await stateOf(job.id)).toMatchObject({ attempts: 3, last_error: 'attempt 2 failed' });
  });

  it('gives up after the last attempt and reports it once', async () => {
    const givenUp: string[] = [];
    const worker = new JobWorker({
      db, log, concurrency: 1, pollIntervalMs: 50,
      definitions: [definition('doomed', async () => { throw new Error('always'); }, { maxAttempts: 2, onGiveUp: async (_p, e) => { givenUp.push(e.message); } })],
    });
    const job = (await insertJob(db, { kind: 'doomed', payload: {}, maxAttempts: 2 }))!;
    worker.start();
    await until(async () => (await stateOf(job.id)).state === 'failed');
    await worker.stop();
    expect(givenUp).toEqual(['always']);
    expect((await stateOf(job.id)).attempts).toBe(2);
  });

  it('never queues two pending jobs with one singleton key', async () => {
    expect(await insertJob(db, { kind: 'solo', payload: {}, maxAttempts: 1, singletonKey: 'k1' })).toBeDefined();
    expect(await insertJob(db, { kind: 'solo', payload: {}, maxAttempts: 1, singletonKey: 'k1' })).toBeUndefined();
  });

  it('hands a job to another worker only after the first one’s lease ends', async () => {
    await insertJob(db, { kind: 'leased', payload: {}, maxAttempts: 5 });
    const first = await claimJob(db, ['leased'], 300);
    expect(first).toBeDefined();
    expect(await claimJob(db, ['leased'], 300)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 400));
    const second = await claimJob(db, ['leased'], 300);
    expect(second?.id).toBe(first!.id);
    expect(second?.attempts).toBe(2);
  });
});
