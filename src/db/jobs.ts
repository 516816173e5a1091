// The durable job queue's storage. Claiming uses FOR UPDATE SKIP LOCKED so replicas sharing one
// PostgreSQL never take the same job; a lease lets another worker take over a crashed one's job.
import type { Queryable } from './database.ts';
import { jsonParam } from './storable-text.ts';

export interface JobRow {
  id: number;
  kind: string;
  payload: unknown;
  singleton_key: string | null;
  state: 'queued' | 'running' | 'done' | 'failed';
  attempts: number;
  max_attempts: number;
  run_at: Date;
  lease_until: Date | null;
  last_error: string | null;
}

export interface NewJob {
  kind: string;
  payload: unknown;
  singletonKey?: string;
  maxAttempts: number;
  delayMs?: number;
}

/** Returns the new job, or undefined when a job with the same singleton key is already pending. */
export async function insertJob(db: Queryable, job: NewJob) {
  return (await insertJobs(db, [job]))[0];
}

/** Several jobs in one statement; a job whose singleton key is already pending is left out of the result. */
export async function insertJobs(db: Queryable, jobs: NewJob[]) {
  if (jobs.length === 0) return [];
  const rows = await db.query<JobRow>(
    `INSERT INTO jobs (kind, payload, singleton_key, max_attempts, run_at)
     SELECT j.kind, j.payload::jsonb, j.singleton_key, j.max_attempts, now() + make_interval(secs => j.delay_s)
     FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::float8[]) AS j(kind, payload, singleton_key, max_attempts, delay_s)
     ON CONFLICT (singleton_key) WHERE state IN ('queued', 'running') DO NOTHING RETURNING *`,
    [
      jobs.map((j) => j.kind),
      jobs.map((j) => jsonParam(j.payload)),
      jobs.map((j) => j.singletonKey ?? null),
      jobs.map((j) => j.maxAttempts),
      jobs.map((j) => (j.delayMs ?? 0) / 1000),
    ],
  );
  // This process's workers look at once (JobWorker listens); other replicas find it by polling.
  db.signalAfterCommit('jobs');
  return rows;
}

/**
 * Marks done the queued jobs of `kind` whose payload contains `match`: a job doing their work for
 * them has begun (a rollout pass covers every pass of its version asked for before it). Returns how many.
 */
export async function absorbQueuedJobs(db: Queryable, kind: string, match: Record<string, unknown>) {
  const rows = await db.query(
    `UPDATE jobs SET state = 'done', lease_until = NULL, finished_at = now()
     WHERE kind = $1 AND state = 'queued' AND payload @> $2::jsonb RETURNING id`,
    [kind, jsonParam(match)],
  );
  return rows.length;
}

export async function claimJob(db: Queryable, kinds: string[], leaseMs: number) {
  return (
    await db.query<JobRow>(
      `UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_until = now() + make_interval(secs => $2)
       WHERE id = (
         SELECT id FROM jobs
         WHERE kind = ANY($1)
           AND ((state = 'queued' AND run_at <= now()) OR (state = 'running' AND lease_until < now()))
         ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [kinds, leaseMs / 1000],
    )
  )[0];
}

export async function extendLease(db: Queryable, jobId: number, leaseMs: number) {
  await db.query(
    `UPDATE jobs SET lease_until = now() + make_interval(secs => $2) WHERE id = $1 AND state = 'running'`,
    [jobId, leaseMs / 1000],
  );
}

export async function completeJob(db: Queryable, jobId: number) {
  await db.query(`UPDATE jobs SET state = 'done', lease_until = NULL, finished_at = now() WHERE id = $1`, [jobId]);
}

/** Schedules another attempt after `retryInMs`, or fails the job for good when it is null. */
export async function failJob(db: Queryable, jobId: number, error: string, retryInMs: number | null) {
  if (retryInMs === null) {
    await db.query(
      `UPDATE jobs SET state = 'failed', last_error = $2, lease_until = NULL, finished_at = now() WHERE id = $1`,
      [jobId, error],
    );
  } else {
    await db.query(
      `UPDATE jobs SET state = 'queued', last_error = $2, lease_until = NULL,
         run_at = now() + make_interval(secs => $3) WHERE id = $1`,
      [jobId, error, retryInMs / 1000],
    );
  }
}

/** Makes these running jobs claimable at once (a replica shutting down hands back what it could not finish). */
export async function releaseJobLeases(db: Queryable, jobIds: number[]) {
  await db.query(`UPDATE jobs SET lease_until = now() WHERE id = ANY($1) AND state = 'running'`, [jobIds]);
}

/**
 * Makes every running job claimable at once. Only safe when this process is known to be the
 * database's only worker (embedded PGlite, which one process opens at a time): the jobs it finds
 * running were left by a crash of this same service.
 */
export async function releaseAllLeases(db: Queryable) {
  const rows = await db.query(`UPDATE jobs SET lease_until = now() WHERE state = 'running' RETURNING id`);
  return rows.length;
}

export async function purgeFinishedJobs(db: Queryable, olderThanHours: number) {
  await db.query(
    `DELETE FROM jobs WHERE state IN ('done', 'failed') AND finished_at < now() - make_interval(hours => $1)`,
    [olderThanHours],
  );
}

/** Unfinished jobs by kind and state (metrics): the partial index jobs_due holds exactly these. */
export async function countUnfinishedJobs(db: Queryable) {
  const rows = await db.query<{ kind: string; state: 'queued' | 'running'; n: number }>(
    `SELECT kind, state, count(*)::int AS n FROM jobs WHERE state IN ('queued', 'running') GROUP BY kind, state`,
  );
  return rows.map((r) => ({ ...r, n: Number(r.n) }));
}
