// Node time from the status changes the database records itself (migration 0021's trigger), on
// PGlite and on PostgreSQL (TEST_DATABASE_URL): every status write is recorded once, a month
// boundary under a running node is split exactly, and a closed month never changes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { databaseLabel, insertOwnerUser, openMigratedTestDb } from '../helpers/database.ts';
import { insertNode } from '../../src/db/nodes.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { accountUsageRows, presentAccountUsage } from '../../src/usage/account-usage.ts';
import { closeMonth } from '../../src/usage/close-month.ts';
import { UsageService } from '../../src/usage/service.ts';
import { findAccountStatusChanges, sumAccountNodeTime, sumAccountTime } from '../../src/db/usage.ts';
import { SettledTime } from '../../src/usage/settled-time.ts';
import { monthRange, nodeTime } from '../../src/usage/node-time.ts';

let t: Awaited<ReturnType<typeof openMigratedTestDb>>;
const HOUR = 3600;

beforeEach(async () => {
  t = await openMigratedTestDb();
  await insertRelease(t.db, 'v1');
  await insertOwnerUser(t.db, 'acct-a', 'a@example.com');
  await insertOwnerUser(t.db, 'acct-b', 'b@example.com');
  // The accounts existed through the history the tests record (a month before an account is refused).
  await t.db.query(`UPDATE accounts SET created_at = '2026-01-01T00:00:00Z'`);
});
afterEach(() => t.close());

async function node(id: string, account = 'acct-a') {
  await insertNode(t.db, { id, userId: account, name: `name-${id}`, network: 'regtest', status: 'STARTING', desiredState: 'running', imageVersion: 'v1', settings: {}, restPort: null, peerPort: null });
}

/** Places a node's recorded changes at chosen times (the trigger stamps them with now()). */
async function history(nodeId: string, changes: Array<[string, string]>, account = 'acct-a') {
  await t.db.query('DELETE FROM node_status_changes WHERE node_id = $1', [nodeId]);
  for (const [status, at] of changes) {
    await t.db.query('INSERT INTO node_status_changes (node_id, account_id, status, changed_at) VALUES ($1, $2, $3, $4)', [nodeId, account, status, new Date(at)]);
  }
}

/** An account's month both ways (each node's days summed, as a snapshot; the API's one query), which must agree. */
async function usage(account: string, month: string, now: string) {
  const { closed, rows } = await accountUsageRows(t.db, account, month, new Date(now));
  const fromRows = presentAccountUsage(month, closed, rows, null);
  const { members, tokens, vssBytes, ...answered } = await new UsageService({ db: t.db, now: () => new Date(now) }).accountUsage(account, month);
  // Who spent API calls is the meter's (test/api/usage.test.ts), VSS bytes the stores' (test/vss); these accounts have neither.
  expect({ members, tokens, vssBytes }).toEqual({ members: [], tokens: [], vssBytes: 0 });
  const byId = (u: typeof fromRows) => ({ ...u, nodes: [...u.nodes].sort((a, b) => a.nodeId.localeCompare(b.nodeId)) });
  expect(byId(answered)).toEqual(byId(fromRows));
  return fromRows;
}

describe(`node time from recorded status changes (${databaseLabel()})`, () => {
  it('records every status change once, from any statement, and nothing when the status stays', async () => {
    await node('n1');
    await t.db.query(`UPDATE nodes SET status = 'RUNNING' WHERE id = 'n1'`);
    await t.db.query(`UPDATE nodes SET status = 'RUNNING', locked = false WHERE id = 'n1'`);
    await t.db.query(`UPDATE nodes SET name = 'renamed' WHERE id = 'n1'`);
    await t.db.transaction(async (tx) => {
      await tx.query(`UPDATE nodes SET status = 'IN_PROGRESS' WHERE id = 'n1'`);
      await tx.query(`UPDATE nodes SET status = 'PAUSED' WHERE id = 'n1'`);
    });
    await t.db.transaction(async (tx) => {
      await tx.query(`UPDATE nodes SET status = 'FAILED' WHERE id = 'n1'`);
      throw new Error('rolled back');
    }).catch(() => {});
    const rows = await t.db.query<{ status: string; account_id: string }>(`SELECT status, account_id FROM node_status_changes WHERE node_id = 'n1' ORDER BY id`);
    expect(rows.map((r) => r.status)).toEqual(['STARTING', 'RUNNING', 'IN_PROGRESS', 'PAUSED']);
    expect(rows.every((r) => r.account_id === 'acct-a')).toBe(true);
  });

  it('splits a month boundary crossed under a running node exactly between the two months', async () => {
    await node('n1');
    await history('n1', [['RUNNING', '2026-10-31T22:30:00Z'], ['PAUSED', '2026-11-01T01:15:00Z']]);
    const oct = await usage('acct-a', '2026-10', '2026-11-01T02:00:00Z');
    const nov = await usage('acct-a', '2026-11', '2026-11-01T02:00:00Z');
    expect(oct.total.runningSeconds).toBe(1.5 * HOUR);
    expect(nov.total.runningSeconds).toBe(1.25 * HOUR);
    expect(nov.total.pausedSeconds).toBe(0.75 * HOUR); // paused until "now"
    expect(oct.total.runningSeconds + nov.total.runningSeconds).toBe(2.75 * HOUR);
    expect(oct.days.at(-1)).toEqual({ date: '2026-10-31', runningSeconds: 1.5 * HOUR, pausedSeconds: 0 });
    expect(nov.days[0]).toEqual({ date: '2026-11-01', runningSeconds: 1.25 * HOUR, pausedSeconds: 0.75 * HOUR });
  });

  it('shows an account only its own nodes', async () => {
    await node('n1');
    await node('nb', 'acct-b');
    await history('nb', [['RUNNING', '2026-11-01T00:00:00Z']], 'acct-b');
    const a = await usage('acct-a', '2026-11', '2026-11-02T00:00:00Z');
    expect(a.nodes.map((n) => n.nodeId)).toEqual(['n1']);
    expect(a.total.runningSeconds).toBe(0);
  });

  it('closes a month once; its figures stay what they were at its end', async () => {
    await node('n1');
    await history('n1', [['RUNNING', '2026-10-31T23:00:00Z']]);
    expect(await closeMonth(t.db, '2026-10')).toBe(true);
    expect(await closeMonth(t.db, '2026-10')).toBe(false);
    // A change recorded late (or a clock gone wrong) cannot move a closed month.
    await t.db.query(`INSERT INTO node_status_changes (node_id, account_id, status, changed_at) VALUES ('n1', 'acct-a', 'PAUSED', '2026-10-31T23:30:00Z')`);
    const oct = await usage('acct-a', '2026-10', '2027-01-01T00:00:00Z');
    expect(oct.closed).toBe(true);
    expect(oct.total.runningSeconds).toBe(HOUR);
    expect(oct.nodes).toEqual([{ nodeId: 'n1', name: 'name-n1', runningSeconds: HOUR, pausedSeconds: 0, apiCalls: 0, gatewayCalls: 0 }]);
    const trail = await t.db.query<{ user_id: string | null; details: { runningSeconds?: number } }>(`SELECT user_id, details FROM audit_events WHERE action = 'usage.month_closed' ORDER BY id`);
    expect(trail.map((e) => e.user_id)).toEqual(['acct-a', null]);
    expect(trail[0]!.details.runningSeconds).toBe(HOUR);
  });

  it('sums node time in the database exactly as usage/node-time.ts does, to the millisecond', async () => {
    const { from, to } = monthRange('2026-11');
    const now = new Date('2026-11-20T13:14:15.678Z');
    const statuses = ['RUNNING', 'PAUSED', 'STARTING', 'IN_PROGRESS', 'FAILED', 'RUNNING', 'PAUSED'];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let n = 0; n < 12; n++) {
      const id = `r${n}`;
      await node(id);
      let at = from.getTime() - 5 * 86_400_000 + Math.floor(random() * 86_400_000);
      const changes: Array<[string, string]> = [];
      for (let k = 0; k < 14; k++) {
        changes.push([statuses[Math.floor(random() * statuses.length)]!, new Date(at).toISOString()]);
        at += Math.floor(random() * 5 * 86_400_000);
      }
      await history(id, changes);
    }
    const byNode = new Map<string, Array<{ status: string; changedAt: Date }>>();
    for (const c of await findAccountStatusChanges(t.db, 'acct-a', from, to)) {
      byNode.set(c.node_id, [...(byNode.get(c.node_id) ?? []), { status: c.status, changedAt: c.changed_at }]);
    }
    const summed = await sumAccountNodeTime(t.db, 'acct-a', from, to, now);
    expect(summed.length).toBeGreaterThan(5);
    for (const row of summed) {
      const reference = nodeTime(byNode.get(row.node_id)!, from, to, now);
      expect([row.node_id, row.running_ms, row.paused_ms]).toEqual([row.node_id, reference.runningMs, reference.pausedMs]);
      const days = reference.days.flatMap((d, i) => (d.runningMs + d.pausedMs > 0 ? [[i, d.runningMs, d.pausedMs]] : []));
      expect(row.days).toEqual(days);
    }
  });

  it('answers the same with the ended days remembered as summed afresh, through the day and into the next', async () => {
    const { from, to } = monthRange('2026-11');
    let seed = 11;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let n = 0; n < 8; n++) {
      await node(`s${n}`);
      let at = from.getTime() - 2 * 86_400_000 + Math.floor(random() * 86_400_000);
      const changes: Array<[string, string]> = [];
      for (let k = 0; k < 12; k++) {
        changes.push([k % 2 === 0 ? 'RUNNING' : 'PAUSED', new Date(at).toISOString()]);
        at += Math.floor(random() * 4 * 86_400_000);
      }
      await history(`s${n}`, changes);
    }
    const settled = new SettledTime();
    const sorted = (x: Awaited<ReturnType<typeof sumAccountTime>>) => ({
      nodes: [...x.nodes].sort((a, b) => a.node_id.localeCompare(b.node_id)),
      days: [...x.days].sort((a, b) => a.day - b.day),
    });
    // The first of the month, twice on one day (the second from memory), then the next days.
    for (const now of ['2026-11-01T05:00:00Z', '2026-11-14T08:00:00.123Z', '2026-11-14T23:59:59.999Z', '2026-11-15T00:00:00.001Z', '2026-11-30T12:00:00Z']) {
      const fresh = await sumAccountTime(t.db, 'acct-a', from, to, new Date(now), null);
      expect(sorted(await settled.sum(t.db, 'acct-a', from, to, new Date(now), null)), now).toEqual(sorted(fresh));
      expect(sorted(await settled.sum(t.db, 'acct-a', from, to, new Date(now), ['s1', 's3'])), now).toEqual(sorted(await sumAccountTime(t.db, 'acct-a', from, to, new Date(now), ['s1', 's3'])));
    }
  });
});
