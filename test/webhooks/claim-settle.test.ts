// The queries under the dispatcher: claims take only the oldest unfinished delivery of each node
// (however long the backlog behind it), a batch of outcomes is written by one statement, a lost
// lease makes a late outcome a no-op (its attempt still recorded), and an expired lease is taken over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { recordNodeEvent } from '../../src/db/node-events.ts';
import { claimDeliveries, fanOutNodeEvents, releaseUnsentDeliveries, settleDeliveries, type ClaimedDelivery, type SettleItem } from '../../src/db/webhook-deliveries.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';
import { insertNodesWithWebhook } from './webhook-nodes.ts';

const attempt = { url: 'http://127.0.0.1:9/hook', startedAt: new Date(), durationMs: 1, statusCode: 204 };
const ok = (d: ClaimedDelivery): SettleItem => ({ delivery: d, attempt, outcome: { state: 'succeeded' } });

describe(`webhook claim and batched settle on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  const nodes = ['a', 'b', 'c'].map((c) => ({ id: c.repeat(32), userId: 'u' }));

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    await insertNodesWithWebhook(db, nodes.map((n) => n.id), attempt.url, 21000);
    // Node a: 50 events, b: 3, c: 1.
    await db.transaction(async (tx) => {
      for (let i = 0; i < 50; i++) await recordNodeEvent(tx, nodes[0]!, 'TEST', { n: i });
      for (let i = 0; i < 3; i++) await recordNodeEvent(tx, nodes[1]!, 'TEST', { n: i });
      await recordNodeEvent(tx, nodes[2]!, 'TEST', { n: 0 });
    });
    expect(await fanOutNodeEvents(db, 500)).toBe(54);
  });
  afterAll(async () => close?.());

  it('claims one delivery per node, the oldest, and nothing more while they are in flight', async () => {
    const first = await claimDeliveries(db, 10, 60_000, 'w1');
    expect(first.map((d) => d.nodeId).sort()).toEqual(nodes.map((n) => n.id));
    expect(first.map((d) => (d.payload.details as { n: number }).n)).toEqual([0, 0, 0]);
    expect(await claimDeliveries(db, 10, 60_000, 'w2')).toEqual([]);

    // One statement settles them all; the next of each node becomes claimable, in order.
    const settled = await settleDeliveries(db, first.map(ok));
    expect([...settled].sort()).toEqual(first.map((d) => d.id).sort());
    const second = await claimDeliveries(db, 10, 60_000, 'w3');
    expect(second.map((d) => [d.nodeId, (d.payload.details as { n: number }).n])).toEqual([
      [nodes[0]!.id, 1],
      [nodes[1]!.id, 1],
    ]);

    // A retry keeps the node's place: its next delivery waits behind it.
    const retried = await settleDeliveries(db, [
      { delivery: second[0]!, attempt: { ...attempt, statusCode: 500 }, outcome: { state: 'pending', retryInMs: 60_000, error: 'HTTP 500' } },
      ok(second[1]!),
    ]);
    expect(retried.size).toBe(2);
    const third = await claimDeliveries(db, 10, 60_000, 'w4');
    expect(third.map((d) => [d.nodeId, (d.payload.details as { n: number }).n])).toEqual([[nodes[1]!.id, 2]]);

    // A late outcome from a worker whose lease was lost moves nothing, but its attempt is recorded.
    const late = await settleDeliveries(db, [ok({ ...third[0]!, leaseToken: 'someone-else' })]);
    expect(late.size).toBe(0);
    const [state] = await db.query<{ state: string }>(`SELECT state FROM webhook_deliveries WHERE id = $1`, [third[0]!.id]);
    expect(state!.state).toBe('delivering');
    const attempts = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_attempts`);
    expect(attempts[0]!.n).toBe(3 + 2 + 1);
  });

  it('takes over a delivery whose lease ran out (a crashed worker), with the next attempt number', async () => {
    const [stuck] = await db.query<{ id: string | number; attempts: number }>(
      `UPDATE webhook_deliveries SET lease_until = now() - interval '1 second' WHERE state = 'delivering' RETURNING id, attempts`,
    );
    const taken = await claimDeliveries(db, 10, 60_000, 'w5');
    expect(taken.map((d) => [d.id, d.attempts])).toEqual([[Number(stuck!.id), stuck!.attempts + 1]]);
    expect((await settleDeliveries(db, taken.map(ok))).size).toBe(1);
  });

  it('gives back deliveries claimed ahead and never sent: claimable at once, with their attempt count as before', async () => {
    await db.query(`UPDATE webhook_deliveries SET state = 'cancelled', finished_at = now() WHERE state IN ('pending', 'delivering')`);
    await db.transaction(async (tx) => {
      for (const n of nodes) await recordNodeEvent(tx, n, 'TEST', { n: 50 });
    });
    expect(await fanOutNodeEvents(db, 500)).toBe(3);
    const ahead = await claimDeliveries(db, 10, 60_000, 'ahead');
    expect(ahead.map((d) => d.attempts)).toEqual([1, 1, 1]);
    // Only the holder of the lease gives a delivery back: another token's release moves nothing.
    await releaseUnsentDeliveries(db, [{ ...ahead[0]!, leaseToken: 'someone-else' }]);
    await releaseUnsentDeliveries(db, ahead.slice(1));
    const again = await claimDeliveries(db, 10, 60_000, 'again');
    expect(again.map((d) => [d.id, d.attempts])).toEqual(ahead.slice(1).map((d) => [d.id, 1]));
    expect((await settleDeliveries(db, [...ahead.slice(0, 1), ...again].map(ok))).size).toBe(3);
  });

  it('never hands one node to two workers claiming at once (several replicas)', async () => {
    await db.query(`UPDATE webhook_deliveries SET state = 'cancelled', finished_at = now() WHERE state IN ('pending', 'delivering')`);
    await db.transaction(async (tx) => {
      for (let i = 0; i < 4; i++) for (const n of nodes) await recordNodeEvent(tx, n, 'TEST', { n: 100 + i });
    });
    expect(await fanOutNodeEvents(db, 500)).toBe(12);
    for (let round = 0; round < 4; round++) {
      const claims = await Promise.all([1, 2, 3, 4].map((w) => claimDeliveries(db, 10, 60_000, `r${round}w${w}`)));
      const all = claims.flat();
      expect(all.map((d) => d.nodeId).sort()).toEqual(nodes.map((n) => n.id));
      expect(all.map((d) => (d.payload.details as { n: number }).n)).toEqual([100 + round, 100 + round, 100 + round]);
      expect((await settleDeliveries(db, all.map(ok))).size).toBe(3);
    }
  });
});
