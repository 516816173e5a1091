// Migration 0021 on a database that already has nodes, and when the month closer closes a month.
import { afterEach, describe, expect, it } from 'vitest';
import { databaseLabel, insertOwnerUser, openMigratedTestDb } from '../helpers/database.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { listMigrations, migrate } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/logger.ts';
import { MonthCloser } from '../../src/usage/close-month.ts';

let t: Awaited<ReturnType<typeof openMigratedTestDb>> | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const insertNodeRow = (id: string, status: string, destroyed: boolean) =>
  t!.db.query(
    `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version, settings, rest_port, peer_port, destroyed_at)
     VALUES ($1, 'acct-a', $1, 'regtest', $2, 'running', 'v1', '{}', NULL, NULL, $3)`,
    [id, status, destroyed ? new Date() : null],
  );

describe(`usage records (${databaseLabel()})`, () => {
  it('migration 0021 records each existing node that is not destroyed once, in its status, from the migration on', async () => {
    t = await openMigratedTestDb(20);
    await insertRelease(t.db, 'v1');
    await insertOwnerUser(t.db, 'acct-a', 'a@example.com');
    await insertNodeRow('live-running', 'RUNNING', false);
    await insertNodeRow('live-paused', 'PAUSED', false);
    await insertNodeRow('gone', 'DESTROYED', true);
    const before = Date.now();
    await migrate(t.db, listMigrations());
    const rows = await t.db.query<{ node_id: string; status: string; changed_at: Date; ended_at: Date | null }>('SELECT * FROM node_status_changes ORDER BY node_id');
    expect(rows.map((r) => [r.node_id, r.status, r.ended_at])).toEqual([
      ['live-paused', 'PAUSED', null],
      ['live-running', 'RUNNING', null],
    ]);
    expect(rows.every((r) => r.changed_at.getTime() >= before - 5_000)).toBe(true);
    // From now on the trigger records every change, and ends the interval before it.
    await t.db.query(`UPDATE nodes SET status = 'PAUSED' WHERE id = 'live-running'`);
    const running = await t.db.query<{ status: string; ended_at: Date | null }>(`SELECT status, ended_at FROM node_status_changes WHERE node_id = 'live-running' ORDER BY id`);
    expect(running.map((r) => [r.status, r.ended_at !== null])).toEqual([['RUNNING', true], ['PAUSED', false]]);
  });

  it('migration 0027 stops the time of a node superseded then, records SUPERSEDED from then on, and a released node accrues again', async () => {
    t = await openMigratedTestDb(26);
    await insertRelease(t.db, 'v1');
    await insertOwnerUser(t.db, 'acct-a', 'a@example.com');
    await insertNodeRow('restored', 'RUNNING', false);
    await insertNodeRow('source', 'PAUSED', false);
    await insertNodeRow('gone', 'DESTROYED', true);
    await t.db.query(`UPDATE nodes SET superseded_by = 'restored' WHERE id IN ('source', 'gone')`);
    await migrate(t.db, listMigrations());
    const changes = async (id: string) =>
      (await t!.db.query<{ status: string; ended_at: Date | null }>('SELECT status, ended_at FROM node_status_changes WHERE node_id = $1 ORDER BY id', [id])).map((r) => [r.status, r.ended_at !== null]);
    expect(await changes('source')).toEqual([['PAUSED', true], ['SUPERSEDED', false]]);
    expect(await changes('gone')).toEqual([['DESTROYED', false]]); // a destroyed node linked to its wallet's holder stays destroyed
    // A restore that failed releases its source: paused (billed) again; a destroy ends it.
    await t.db.query(`UPDATE nodes SET superseded_by = NULL WHERE id = 'source'`);
    await t.db.query(`UPDATE nodes SET superseded_by = 'restored' WHERE id = 'source'`);
    await t.db.query(`UPDATE nodes SET status = 'DESTROYING' WHERE id = 'source'`);
    expect(await changes('source')).toEqual([['PAUSED', true], ['SUPERSEDED', true], ['PAUSED', true], ['SUPERSEDED', true], ['DESTROYING', false]]);
  });

  it('closes the previous month only once its grace has passed, and once', async () => {
    t = await openMigratedTestDb();
    await insertOwnerUser(t.db, 'acct-a', 'a@example.com');
    let now = new Date('2026-12-01T00:05:00Z');
    const closer = new MonthCloser({ db: t.db, graceMs: 10 * 60_000, checkIntervalMs: 60_000, log: createLogger('silent'), now: () => now });
    await closer.check();
    expect(await t.db.query('SELECT month FROM usage_months_closed')).toEqual([]);
    now = new Date('2026-12-01T00:10:00Z');
    await closer.check();
    await closer.check();
    const closed = await t.db.query<{ month: Date }>('SELECT month FROM usage_months_closed');
    expect(closed.map((r) => r.month.toISOString().slice(0, 10))).toEqual(['2026-11-01']);
    expect(await t.db.query(`SELECT 1 FROM audit_events WHERE action = 'usage.month_closed' AND user_id IS NULL`)).toHaveLength(1);
  });
});
