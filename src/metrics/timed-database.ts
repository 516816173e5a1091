// The database with every statement timed: the same Database (kind, transactions, commit signals),
// each query and exec observed on its way through, inside transactions too. db/ knows nothing of it.
import type { Database, Queryable } from '../db/database.ts';

export function timedDatabase(db: Database, observe: (seconds: number) => void): Database {
  const timed = (q: Queryable): Queryable => ({
    async query<T>(sql: string, params?: unknown[]) {
      const started = performance.now();
      try {
        return await q.query<T>(sql, params);
      } finally {
        observe((performance.now() - started) / 1000);
      }
    },
    async exec(sql: string) {
      const started = performance.now();
      try {
        await q.exec(sql);
      } finally {
        observe((performance.now() - started) / 1000);
      }
    },
    signalAfterCommit: (signal) => q.signalAfterCommit(signal),
  });
  return {
    ...timed(db),
    kind: db.kind,
    commitSignals: db.commitSignals,
    transaction: (fn) => db.transaction((tx) => fn(timed(tx))),
    ...(db.poolStats && { poolStats: () => db.poolStats!() }),
    close: () => db.close(),
  };
}
