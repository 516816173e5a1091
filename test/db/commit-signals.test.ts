// Wake-ups of in-process readers after a commit (db/commit-signals.ts), on the real databases: a
// listener hears a write only once it has committed, and never hears a rolled-back one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { recordNodeEvent } from '../../src/db/node-events.ts';
import { insertOwnerUser, databaseLabel, openMigratedTestDb } from '../helpers/database.ts';

describe(`commit signals on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  let heard = 0;
  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    db.commitSignals.on('node-events', () => heard++);
  });
  afterAll(() => close());

  it('calls the listener once after the commit, however often the transaction signalled', async () => {
    heard = 0;
    let heardBeforeCommit = -1;
    await db.transaction(async (tx) => {
      tx.signalAfterCommit('node-events');
      tx.signalAfterCommit('node-events');
      heardBeforeCommit = heard;
    });
    expect(heardBeforeCommit).toBe(0);
    expect(heard).toBe(1);
  });

  it('never calls it for a transaction that rolled back', async () => {
    heard = 0;
    await expect(
      db.transaction(async (tx) => {
        tx.signalAfterCommit('node-events');
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(heard).toBe(0);
  });

  it('calls it at once outside a transaction (the statement has committed)', async () => {
    heard = 0;
    db.signalAfterCommit('node-events');
    expect(heard).toBe(1);
  });

  it('is signalled by recording a node event', async () => {
    await db.query(`INSERT INTO image_versions (version) VALUES ('s1')`);
    await insertOwnerUser(db, 'su', 'su@example.com', 'starter');
    const [node] = await db.query<{ id: string; userId: string }>(
      `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version, settings, rest_port, peer_port)
       VALUES ('sn', 'su', 'n', 'regtest', 'RUNNING', 'running', 's1', '{}', 21900, 21901) RETURNING id, user_id AS "userId"`,
    );
    heard = 0;
    await db.transaction((tx) => recordNodeEvent(tx, node!, 'TEST'));
    expect(heard).toBe(1);
  });
});
