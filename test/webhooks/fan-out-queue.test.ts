// Fan-out takes events from the queue a trigger fills (migration 0016): each event once, none of
// node_events rewritten, and a database migrated while the previous version runs beside it loses
// no event and fans none out twice.
import { afterEach, describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../../src/db/database.ts';
import { listMigrations, migrate } from '../../src/db/migrate.ts';
import { recordNodeEvent } from '../../src/db/node-events.ts';
import { fanOutNodeEvents } from '../../src/db/webhook-deliveries.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';
import { insertNodesWithWebhook } from './webhook-nodes.ts';

const QUEUE_MIGRATION = 16;
const url = 'http://127.0.0.1:9/hook';

// The previous version's fan-out, as it ran before migration 0016.
const PREVIOUS_FAN_OUT = `WITH picked AS (
     SELECT id FROM node_events WHERE webhook_fanned_out_at IS NULL ORDER BY id LIMIT 500
   ), marked AS (
     UPDATE node_events e SET webhook_fanned_out_at = now() FROM picked WHERE e.id = picked.id
     RETURNING e.id, e.node_id
   ), inserted AS (
     INSERT INTO webhook_deliveries (event_id, node_id, url)
     SELECT m.id, m.node_id, n.settings->>'webhookUrl' FROM marked m JOIN nodes n ON n.id = m.node_id
     WHERE coalesce(n.settings->>'webhookUrl', '') <> ''
     ORDER BY m.id
     RETURNING id
   )
   SELECT (SELECT count(*) FROM marked)::int AS events`;

const eventNumbers = async (db: Queryable) =>
  (
    await db.query<{ n: number }>(
      `SELECT (e.payload->'details'->>'n')::int AS n FROM webhook_deliveries d JOIN node_events e ON e.id = d.event_id ORDER BY d.id`,
    )
  ).map((r) => r.n);

describe(`webhook fan-out from the queue of new events, on ${databaseLabel()}`, () => {
  let db: Database;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('turns each event into one delivery, in order, and rewrites no event', async () => {
    ({ db, close } = await openMigratedTestDb());
    const [withUrl, withoutUrl] = await insertNodesWithWebhook(db, ['a'.repeat(32), 'b'.repeat(32)], url, 23000);
    await db.query(`UPDATE nodes SET settings = '{}' WHERE id = $1`, [withoutUrl!.id]);
    await db.transaction(async (tx) => {
      for (let n = 0; n < 5; n++) await recordNodeEvent(tx, n === 2 ? withoutUrl! : withUrl!, 'TEST', { n });
    });

    // A row version is identified by its xmin and place: an update would change both.
    const eventVersions = () => db.query(`SELECT id, xmin::text AS xmin, ctid::text AS ctid FROM node_events ORDER BY id`);
    const before = await eventVersions();
    expect(await fanOutNodeEvents(db, 500)).toBe(5);
    expect(await eventVersions()).toEqual(before);
    // The node without a webhook URL gets no delivery; its event left the queue all the same.
    expect(await eventNumbers(db)).toEqual([0, 1, 3, 4]);
    expect(await fanOutNodeEvents(db, 500)).toBe(0);
    expect(await db.query('SELECT * FROM webhook_fan_out_queue')).toEqual([]);
  });

  it('takes at most the batch, oldest first', async () => {
    ({ db, close } = await openMigratedTestDb());
    const [node] = await insertNodesWithWebhook(db, ['c'.repeat(32)], url, 23010);
    for (let n = 0; n < 5; n++) await recordNodeEvent(db, node!, 'TEST', { n });
    expect(await fanOutNodeEvents(db, 3)).toBe(3);
    expect(await eventNumbers(db)).toEqual([0, 1, 2]);
    expect(await fanOutNodeEvents(db, 3)).toBe(2);
    expect(await eventNumbers(db)).toEqual([0, 1, 2, 3, 4]);
  });

  it('keeps a rolling update exact: events the previous version left are queued, its fan-out finds none after', async () => {
    ({ db, close } = await openMigratedTestDb(QUEUE_MIGRATION - 1));
    const [node] = await insertNodesWithWebhook(db, ['d'.repeat(32)], url, 23020);
    // The previous version recorded events 0-3 and fanned out the first two.
    for (let n = 0; n < 2; n++) await recordNodeEvent(db, node!, 'TEST', { n });
    expect((await db.query<{ events: number }>(PREVIOUS_FAN_OUT))[0]!.events).toBe(2);
    for (let n = 2; n < 4; n++) await recordNodeEvent(db, node!, 'TEST', { n });

    // The update to the version that brought the queue, whatever later versions add.
    expect(await migrate(db, listMigrations().filter((m) => m.version <= QUEUE_MIGRATION))).toEqual([QUEUE_MIGRATION]);
    // Event 4 comes from a replica of the previous version (the same insert) after the migration.
    await recordNodeEvent(db, node!, 'TEST', { n: 4 });
    expect((await db.query<{ events: number }>(PREVIOUS_FAN_OUT))[0]!.events).toBe(0);
    expect(await fanOutNodeEvents(db, 500)).toBe(3);
    expect(await eventNumbers(db)).toEqual([0, 1, 2, 3, 4]);
  });
});
