// Named leases (see migration 0009): one holder at a time, taken over only after expiry.
import type { Queryable } from './database.ts';

export interface LeaseRow {
  name: string;
  holder: string;
  acquired_at: Date;
  expires_at: Date;
}

/**
 * Takes the lease for `holder`, or renews it when `holder` has it already, for `ttlMs` from now
 * (the database's clock, the one every replica shares). Answers the row when `holder` holds it
 * now, undefined when another holder's lease has not expired.
 */
export async function acquireLease(db: Queryable, name: string, holder: string, ttlMs: number): Promise<LeaseRow | undefined> {
  const rows = await db.query<LeaseRow>(
    `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
     ON CONFLICT (name) DO UPDATE
       SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at,
           acquired_at = CASE WHEN leases.holder = EXCLUDED.holder THEN leases.acquired_at ELSE now() END
       WHERE leases.holder = EXCLUDED.holder OR leases.expires_at < now()
     RETURNING *`,
    [name, holder, ttlMs / 1000],
  );
  return rows[0];
}

/** Hands the lease back so another replica can take it at once; a no-op unless `holder` has it. */
export async function releaseLease(db: Queryable, name: string, holder: string): Promise<void> {
  await db.query('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder]);
}

export async function findLease(db: Queryable, name: string): Promise<LeaseRow | undefined> {
  return (await db.query<LeaseRow>('SELECT * FROM leases WHERE name = $1', [name]))[0];
}
