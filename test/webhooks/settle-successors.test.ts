// The write of an outcome that also claims the node's next delivery: only after the delivery has
// finished (a retry keeps the node's place), only when asked, only a due successor, and not for
// a worker that lost its lease.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { recordNodeEvent } from '../../src/db/node-events.ts';
import {
  claimDeliveries,
  fanOutNodeEvents,
  settleAndClaimSuccessors,
  type ClaimedDelivery,
  type SettleItem,
} from '../../src/db/webhook-deliveries.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';
import { insertNodesWithWebhook } from './webhook-nodes.ts';

const attempt = { url: 'http://127.0.0.1:9/hook', startedAt: new Date(), durationMs: 1, statusCode: 204 };
const finished = (d: ClaimedDelivery, claimNext = true): SettleItem => ({ delivery: d, attempt, outcome: { state: 'succeeded' }, claimNext });
const lease = (token: string) => ({ leaseMs: 60_000, leaseToken: token });
const eventNumber = (d: ClaimedDelivery) => (d.payload.details as { n: number }).n;

describe(`settling a webhook delivery claims its node's next one, on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  const nodes = ['d', 'e'].map((c) => ({ id: c.repeat(32), userId: 'u' }));

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    await insertNodesWithWebhook(db, nodes.map((n) => n.id), attempt.url, 22000);
    // Node d: events 0..5, node e: 0..1.
    await db.transaction(async (tx) => {
      for (let i = 0; i < 6; i++) await recordNodeEvent(tx, nodes[0]!, 'TEST', { n: i });
      for (let i = 0; i < 2; i++) await recordNodeEvent(tx, nodes[1]!, 'TEST', { n: i });
    });
    expect(await fanOutNodeEvents(db, 500)).toBe(8);
  });
  afterAll(async () => close?.());

  it('claims the next delivery of each finished one, in order, under the new lease', async () => {
    const first = await claimDeliveries(db, 10, 60_000, 'w1');
    expect(first.map(eventNumber)).toEqual([0, 0]);
    const { settled, claimed } = await settleAndClaimSuccessors(db, first.map((d) => finished(d)), lease('s1'));
    expect([...settled].sort()).toEqual(first.map((d) => d.id).sort());
    expect(claimed.map((d) => [d.nodeId, eventNumber(d), d.attempts, d.leaseToken])).toEqual([
      [nodes[0]!.id, 1, 1, 's1'],
      [nodes[1]!.id, 1, 1, 's1'],
    ]);
    // They are held: a claim finds nothing, and node e's queue is now empty.
    expect(await claimDeliveries(db, 10, 60_000, 'w2')).toEqual([]);
    const last = await settleAndClaimSuccessors(db, claimed.map((d) => finished(d)), lease('s2'));
    expect(last.claimed.map((d) => [d.nodeId, eventNumber(d)])).toEqual([[nodes[0]!.id, 2]]);

    // Not asked: the outcome is written and the next waits for a claim.
    const unasked = await settleAndClaimSuccessors(db, [finished(last.claimed[0]!, false)], lease('s3'));
    expect(unasked.settled.size).toBe(1);
    expect(unasked.claimed).toEqual([]);
    const [third] = await claimDeliveries(db, 10, 60_000, 'w3');
    expect(eventNumber(third!)).toBe(3);

    // A retry keeps the node's place: nothing is claimed behind it.
    const retry: SettleItem = { ...finished(third!), outcome: { state: 'pending', retryInMs: 0, error: 'HTTP 500' } };
    const retried = await settleAndClaimSuccessors(db, [retry], lease('s4'));
    expect(retried.settled.size).toBe(1);
    expect(retried.claimed).toEqual([]);

    // A late outcome (its lease went to another worker) claims nothing either.
    const [again] = await claimDeliveries(db, 10, 60_000, 'w4');
    expect([eventNumber(again!), again!.attempts]).toEqual([3, 2]);
    const late = await settleAndClaimSuccessors(db, [finished({ ...again!, leaseToken: 'someone-else' })], lease('s5'));
    expect(late).toEqual({ settled: new Set(), claimed: [] });
  });

  it('claims in place: a claim adds no index entries (a heap-only update)', async () => {
    await db.transaction(async (tx) => {
      for (let i = 10; i < 14; i++) await recordNodeEvent(tx, nodes[1]!, 'TEST', { n: i });
    });
    await fanOutNodeEvents(db, 500);
    // This transaction's own counts of row updates, before and after the claim.
    const counts = await db.transaction(async (tx) => {
      const updates = async () => {
        const [row] = await tx.query<{ upd: string; hot: string }>(
          `SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_xact_user_tables WHERE relname = 'webhook_deliveries'`,
        );
        return { updated: Number(row!.upd), hot: Number(row!.hot) };
      };
      const before = await updates();
      const claimed = await claimDeliveries(tx, 10, 60_000, 'hot');
      const after = await updates();
      return { claimed: claimed.length, updated: after.updated - before.updated, hot: after.hot - before.hot };
    });
    expect(counts.claimed).toBeGreaterThan(0);
    expect(counts).toEqual({ claimed: counts.claimed, updated: counts.claimed, hot: counts.claimed });
  });

  it('leaves a successor that is not due yet to a later claim', async () => {
    // Event 3 is still held by w4 (the late outcome above moved nothing): its lease runs out.
    await db.query(`UPDATE webhook_deliveries SET lease_until = now() - interval '1 second' WHERE state = 'delivering'`);
    const [held] = await claimDeliveries(db, 10, 60_000, 'w5');
    expect(eventNumber(held!)).toBe(3);
    // Event 4 waits for a retry a minute from now.
    await db.query(
      `UPDATE webhook_deliveries d SET next_attempt_at = now() + interval '1 minute'
       FROM node_events e WHERE e.id = d.event_id AND (e.payload->'details'->>'n')::int = 4 AND d.node_id = $1`,
      [nodes[0]!.id],
    );
    const notDue = await settleAndClaimSuccessors(db, [finished(held!)], lease('s6'));
    expect(notDue.settled.size).toBe(1);
    expect(notDue.claimed).toEqual([]);

    // Due again: the next claim takes it.
    await db.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE node_id = $1 AND finished_at IS NULL`, [nodes[0]!.id]);
    const [four] = await claimDeliveries(db, 10, 60_000, 'w6');
    expect(eventNumber(four!)).toBe(4);
  });
});
