// Seeds a user with many nodes and builds straight into the database, for benchmarks.
import type { Database } from '../src/db/database.ts';
import { newId } from '../src/auth/tokens.ts';
import { latestRelease } from '../src/db/releases.ts';

export async function seedNodes(db: Database, userId: string, nodes: number, buildsPerNode: number, status = 'PAUSED') {
  const version = (await latestRelease(db))!.version;
  await db.transaction(async (tx) => {
    for (let i = 0; i < nodes; i++) {
      const id = newId();
      await tx.query(
        `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version, settings, rest_port, peer_port, destroyed_at)
         VALUES ($1, $2, $3, 'regtest', $4, 'stopped', $5, '{"webhookUrl":"https://example.com/h"}', $6, $7, NULL)`,
        [id, userId, `bench-${i}`, status, version, 50_000 + i * 2, 50_001 + i * 2],
      );
      for (let b = 1; b <= buildsPerNode; b++) {
        await tx.query(
          `INSERT INTO builds (node_id, build_number, action, status, image_version, finished_at)
           VALUES ($1, $2, $3, 'SUCCESS', $4, now())`,
          [id, b, b === 1 ? 'create' : b % 2 === 0 ? 'stop' : 'start', version],
        );
      }
    }
  });
}

/**
 * `count` users 'u1'..'u<count>' (emails bench<g>@example.com), each the owner of an account of
 * their own on `plan` (migration 0020: the account's id is the owner's).
 */
export async function seedOwners(db: Pick<Database, 'query'>, count: number, plan: string, ids: { prefix?: string } = {}) {
  const prefix = ids.prefix ?? 'u';
  await db.query(`INSERT INTO users (id, email) SELECT $2 || g, 'bench' || g || '@example.com' FROM generate_series(1, $1::int) g`, [count, prefix]);
  await db.query(`INSERT INTO accounts (id, plan) SELECT $2 || g, $3 FROM generate_series(1, $1::int) g`, [count, prefix, plan]);
  await db.query(`INSERT INTO account_members (account_id, user_id, role) SELECT $2 || g, $2 || g, 'owner' FROM generate_series(1, $1::int) g`, [count, prefix]);
}
