// Running nodes of one user, each with a webhook URL, straight in the database: what the tests of
// the delivery queries start from.
import type { Database } from '../../src/db/database.ts';
import { insertOwnerUser } from '../helpers/database.ts';

/** Inserts an image version, user `u` and one node per id (ports from `portBase` up), all sending to `webhookUrl`. */
export async function insertNodesWithWebhook(db: Database, ids: string[], webhookUrl: string, portBase: number) {
  await db.query(`INSERT INTO image_versions (version) VALUES ('t')`);
  await insertOwnerUser(db, 'u', 'u@example.com', 'starter');
  for (const [i, id] of ids.entries()) {
    await db.query(
      `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version, settings, rest_port, peer_port)
       VALUES ($1, 'u', $2, 'regtest', 'RUNNING', 'running', 't', $3, $4, $5)`,
      [id, `n${i}`, JSON.stringify({ webhookUrl }), portBase + 2 * i, portBase + 1 + 2 * i],
    );
  }
  return ids.map((id) => ({ id, userId: 'u' }));
}
