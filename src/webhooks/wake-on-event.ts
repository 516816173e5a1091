// Events are written by many modules (node changes, builds, upgrades, log exports), each inside its
// own transaction. Rather than each remembering to wake the webhook dispatcher after its commit,
// the database handle the service uses notices a committed insert into node_events and wakes it
// then, and not before: a wake before the commit would find nothing. Other replicas' events are
// found by the dispatcher's poll.
import type { Database, Queryable } from '../db/database.ts';

const WRITES_EVENT = /\binsert\s+into\s+node_events\b/i;

export function wakeOnNodeEvents(db: Database, wake: () => void): Database {
  const watch = (q: Queryable, onEvent: () => void): Queryable => ({
    async query<T>(sql: string, params?: unknown[]) {
      const rows = await q.query<T>(sql, params);
      if (WRITES_EVENT.test(sql)) onEvent();
      return rows;
    },
    exec: (sql: string) => q.exec(sql),
  });
  return {
    kind: db.kind,
    ...watch(db, wake),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      let wrote = false;
      const result = await db.transaction((tx) => fn(watch(tx, () => (wrote = true))));
      if (wrote) wake();
      return result;
    },
    close: () => db.close(),
  };
}
