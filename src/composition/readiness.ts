// What /readyz answers: whether this replica should be sent traffic now. Kubernetes' readiness
// probe (and a load balancer's health check) route around a replica that says no; /healthz, the
// liveness probe, only says the process is alive and serving, so a database outage makes every
// replica unready without restarting any of them.
import type { Database } from '../db/database.ts';
import { latestMigrationVersion } from '../db/migrate.ts';
import type { NodeRuntime } from '../runtime/types.ts';

export interface Readiness {
  ready: boolean;
  /** One entry per check: 'ok' or why not. */
  checks: { service: string; database: string; migrations: string; runtime: string };
}

/** A database that takes longer than this to answer `SELECT 1` is as good as down for a probe. */
const DATABASE_CHECK_TIMEOUT_MS = 2_000;

export interface ReadinessDeps {
  db: Database;
  runtime: Pick<NodeRuntime, 'isReady'>;
  /** 'ok' once started; why not while starting or shutting down. */
  serviceState: () => string;
}

export async function checkReadiness({ db, runtime, serviceState }: ReadinessDeps): Promise<Readiness> {
  const [database, migrations] = await withTimeout(checkDatabase(db), DATABASE_CHECK_TIMEOUT_MS).then(
    (answer) => answer,
    // No detail: the probe is public, and a driver's message may name internal hosts.
    () => ['not answering', 'unknown: the database did not answer'] as const,
  );
  const checks = {
    service: serviceState(),
    database,
    migrations,
    runtime: runtime.isReady() ? 'ok' : 'the Kubernetes watches have not synced yet',
  };
  return { ready: Object.values(checks).every((c) => c === 'ok'), checks };
}

let expectedSchema: number | undefined;

async function checkDatabase(db: Database): Promise<readonly [string, string]> {
  try {
    await db.query('SELECT 1');
  } catch {
    return ['not answering', 'unknown: the database did not answer'] as const;
  }
  const expected = (expectedSchema ??= latestMigrationVersion());
  let applied = 0;
  try {
    const [row] = await db.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations');
    applied = row?.version ?? 0;
  } catch {
    // No migrations table: nothing applied yet.
  }
  // A newer replica may already have applied later migrations (they only add, see the rule for
  // migrations in docs/OPERATIONS.md, "Several replicas, one service"), so a schema ahead of this code is fine; one behind it is not.
  return ['ok', applied >= expected ? 'ok' : `schema at version ${applied}, this version needs ${expected}`] as const;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
