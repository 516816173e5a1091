// RUNTIME=process runs every node as a child process of the replica that started it, so only one
// replica may serve a database with it: a second would find the nodes "not running" (they are
// another machine's children) and start them again. On PostgreSQL (where a second replica could
// connect) the replica holds the `process-runtime` lease for as long as it runs and refuses to
// start while another holds it. The holder is the machine and DATA_DIR, not the process, so the
// same installation restarting after a crash takes its own lease back at once.
import { hostname } from 'node:os';
import type { Database } from '../db/database.ts';
import { findLease } from '../db/leases.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';
import { LeaderLease } from '../jobs/leader-lease.ts';
import type { Logger } from '../logger.ts';

export const SOLE_REPLICA_LEASE = 'process-runtime';
const TTL_MS = 30_000;

export interface SoleReplica {
  stop(): Promise<void>;
}

export async function claimSoleReplica(db: Database, dataDir: string, log: Logger): Promise<SoleReplica> {
  const lease = new LeaderLease({ db, name: SOLE_REPLICA_LEASE, holder: `${hostname()}:${dataDir}`, ttlMs: TTL_MS, log });
  if (!(await lease.renew())) {
    const other = await findLease(db, SOLE_REPLICA_LEASE);
    throw new Error(
      `RUNTIME=process runs the nodes as child processes of a single replica, and another one (${other?.holder ?? 'unknown'}) ` +
        `serves this database. Stop it first, or run several replicas with RUNTIME=kubernetes.`,
    );
  }
  const loop = new BackgroundLoop({
    name: 'renewing the process-runtime lease',
    intervalMs: TTL_MS / 3,
    log,
    run: async () => {
      if (!(await lease.renew())) log.error('another replica took the process-runtime lease: two replicas now run nodes on one database');
    },
  });
  loop.start();
  return {
    async stop() {
      await loop.stop();
      await lease.release();
    },
  };
}
