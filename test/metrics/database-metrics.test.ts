// The metrics read from the database and about it, below the HTTP layer so their inputs can be set
// exactly: the job and rollout gauges from rows written here, every statement through the timed
// database counted once (the scrape's own reads not at all), the pool gauges on PostgreSQL, and a
// scrape that still answers when the database does not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceMetrics } from '../../src/metrics/service-metrics.ts';
import { claimJob, completeJob, insertJob } from '../../src/db/jobs.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { insertRollout, updateRollout } from '../../src/db/rollouts.ts';
import type { Database } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';
import { parseExposition, series } from '../helpers/metrics.ts';

describe(`metrics of the database on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  let metrics: ServiceMetrics;
  const scrape = async () => parseExposition(await metrics.registry.metrics()).samples;

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    metrics = new ServiceMetrics(db, createLogger('silent'));
  });
  afterAll(() => close?.());

  it('counts the jobs waiting and running by kind, and a kind without jobs any more as 0', async () => {
    for (const kind of ['a', 'a', 'b']) await insertJob(db, { kind, payload: {}, maxAttempts: 1 });
    const claimed = (await claimJob(db, ['b'], 30_000))!;
    let s = await scrape();
    expect(s.get(series('rlncloud_jobs_queued', { kind: 'a' }))).toBe(2);
    expect(s.get(series('rlncloud_jobs_running', { kind: 'a' }))).toBe(0);
    expect(s.get(series('rlncloud_jobs_queued', { kind: 'b' }))).toBe(0);
    expect(s.get(series('rlncloud_jobs_running', { kind: 'b' }))).toBe(1);
    await completeJob(db, claimed.id);
    s = await scrape();
    expect(s.get(series('rlncloud_jobs_running', { kind: 'b' }))).toBe(0);
    expect(s.get(series('rlncloud_jobs_queued', { kind: 'a' }))).toBe(2);
  });

  it('counts the rollouts in progress: running, neither paused nor completed', async () => {
    expect((await scrape()).get('rlncloud_rollouts_in_progress')).toBe(0);
    for (const version of ['m-1', 'm-2', 'm-3']) {
      await insertRelease(db, version);
      await insertRollout(db, version, 1, 0);
    }
    expect((await scrape()).get('rlncloud_rollouts_in_progress')).toBe(3);
    await updateRollout(db, 'm-1', { state: 'paused', paused_reason: 'test' });
    await updateRollout(db, 'm-2', { state: 'completed' });
    const s = await scrape();
    expect(s.get('rlncloud_rollouts_in_progress')).toBe(1);
    // By state: the paused one is what an operator must look at (docs/MONITORING.md).
    expect(['running', 'paused', 'completed'].map((state) => s.get(series('rlncloud_rollouts', { state })))).toEqual([1, 1, 1]);
  });

  it('times every statement through the database it hands out, inside transactions too, and none of its own reads', async () => {
    const count = async () => (await scrape()).get('rlncloud_db_query_duration_seconds_count')!;
    const before = await count();
    await metrics.database.query('SELECT 1');
    await metrics.database.exec('SELECT 1; SELECT 2');
    await metrics.database.transaction(async (tx) => {
      await tx.query('SELECT 1');
      await tx.query('SELECT $1::int AS n', [2]);
    });
    await expect(metrics.database.query('SELECT * FROM no_such_table')).rejects.toThrow();
    // query, exec, two in the transaction, the failed one; three scrapes read the database meanwhile.
    expect(await count()).toBe(before + 5);
    expect(metrics.database.kind).toBe(db.kind);
  });

  it.runIf(databaseLabel() === 'PostgreSQL')("reports PostgreSQL's connection pool", async () => {
    const s = await scrape();
    expect(s.get('rlncloud_db_pool_connections')).toBeGreaterThanOrEqual(1);
    expect(s.get('rlncloud_db_pool_idle_connections')).toBeLessThanOrEqual(s.get('rlncloud_db_pool_connections')!);
    expect(s.get('rlncloud_db_pool_waiting_requests')).toBe(0);
  });

  it.runIf(databaseLabel() === 'PGlite')('has no pool metrics on PGlite', async () => {
    const s = await scrape();
    expect([...s.keys()].filter((k) => k.startsWith('rlncloud_db_pool_'))).toEqual([]);
  });

  it('still answers a scrape when the database does not, without the gauges read from it', async () => {
    const broken: Database = { ...db, query: () => Promise.reject(new Error('connection refused')) };
    const cut = new ServiceMetrics(broken, createLogger('silent'), { nodePortRange: { from: 40000, to: 40009 } });
    const s = parseExposition(await cut.registry.metrics()).samples;
    // Unknown, not 0: no alert on "no rollout running" fires from a database outage.
    expect(s.get('rlncloud_rollouts_in_progress')).toBeNaN();
    const fromDatabase = ['rlncloud_nodes{', 'rlncloud_jobs_queued', 'rlncloud_rollouts{', 'rlncloud_webhook_deliveries_unfinished', 'rlncloud_node_ports'];
    expect([...s.keys()].filter((k) => fromDatabase.some((prefix) => k.startsWith(prefix)))).toEqual([]);
    expect(s.get(series('rlncloud_builds_total', { action: 'create', result: 'success' }))).toBe(0);
    expect(s.get('rlncloud_process_cpu_seconds_total')).toBeGreaterThan(0);
  });
});
