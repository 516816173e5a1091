// The event feed's order is numeric in the transaction id, whatever its number of digits (a text
// sort would put transaction 10 before 9), and every read of it agrees.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertOwnerUser, databaseLabel, openMigratedTestDb } from '../helpers/database.ts';
import { lastSettledPosition, readNodeEvents, readSettledEvents, readUserEventsBetween } from '../../src/db/node-event-feed.ts';
import type { Database } from '../../src/db/database.ts';

describe(`node event feed order on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  // Below the transaction ids either database has reached (so all count as finished), across digit counts.
  const TXS = ['8', '9', '10', '100'];

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    await insertOwnerUser(db, 'u', 'u@example.com', 'starter');
    await db.query(`INSERT INTO image_versions (version) VALUES ('v1')`);
    await db.query(`INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version) VALUES ('${'a'.repeat(32)}', 'u', 'n', 'regtest', 'RUNNING', 'running', 'v1')`);
    // Written in the reverse order, with made-up (long finished) transaction ids.
    for (const tx of [...TXS].reverse()) {
      await db.query(
        `INSERT INTO node_events (event_id, node_id, user_id, event_type, payload, tx_id) VALUES ($1, $2, 'u', 'TEST', $3::jsonb, $4::xid8)`,
        [`evt_${tx}`, 'a'.repeat(32), JSON.stringify({ eventType: 'TEST', eventTimestamp: new Date().toISOString(), nodeId: 'a'.repeat(32), details: {} }), tx],
      );
    }
  });
  afterAll(() => close?.());

  it('reads by transaction id as a number, in every query', async () => {
    const txs = (rows: { position: { tx: string } }[]) => rows.map((r) => r.position.tx);
    expect(txs((await readSettledEvents(db, null, 10)).rows)).toEqual(TXS);
    expect(txs(await readNodeEvents(db, 'a'.repeat(32), null, 'oldest', 10))).toEqual(TXS);
    expect(txs(await readNodeEvents(db, 'a'.repeat(32), null, 'newest', 10))).toEqual([...TXS].reverse());
    const all = (await readSettledEvents(db, null, 10)).rows;
    expect(txs(await readUserEventsBetween(db, 'u', all[0]!.position, all.at(-1)!.position, 10))).toEqual(TXS.slice(1));
    expect((await lastSettledPosition(db))?.tx).toBe('100');
    expect(txs((await readSettledEvents(db, all[1]!.position, 10)).rows)).toEqual(TXS.slice(2));
  });
});
