// The alert rules evaluated by promtool on what a real service exposed while one of its parts was in
// trouble the way production gets there, the rest of it serving: a node whose wallet syncs with a
// slow indexer answers its balance through the bearer gateway in seconds; the reconcile loop's pass
// waits on a runtime that stopped answering (as a Kubernetes API server that takes requests and
// never answers them); last, as it stays, a node's VSS store grows past VSS_MAX_BYTES_PER_NODE and
// the janitor measures it. Each phase's scrapes, one a minute for promtool (promtool.ts), must fire
// its alert and nothing else. The reconcile loop passes every 200 ms here, so scrapes a few hundred
// ms apart are further apart than its passes, as Prometheus' are. Then the node's writes to VSS
// fail (a trigger refuses them in the database; reads still answer), so its daemon holds a state
// change VSS has not taken, which the pending writes meter (every second here) finds in its
// /vssbackupinfo; once VSS takes writes again the next change sends it. The service's database, its
// certificates and its stop: alerts-from-real-metrics.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { series } from '../helpers/metrics.ts';
import { createNodes } from '../helpers/tenants.ts';
import { newVssKey, vssClient } from '../helpers/vss-client.ts';
import { initWallet, unlock } from '../backups/backup-helpers.ts';
import { rawRequest } from '../gateway/gateway-client.ts';
import { createLogger } from '../../src/logger.ts';
import { VssJanitor } from '../../src/vss/vss-janitor.ts';
import { hasPromtool, inputSeries, scrapeTarget, testRules, type TimedScrape } from './promtool.ts';
import { expectAll, MACHINE_DEPENDENT, until } from './alert-expectations.ts';

/** How long the node's wallet sync takes: its balance is answered in the gateway's 5-10 s bucket. */
const SYNC_MS = 5_500;
const SOFT_LIMIT_BYTES = 1_000;
const SLOW_MINUTES = 20;
// A stall's scrapes, RECONCILE_PASS_MS apart at least: a loop that passes would pass between any two.
const RECONCILE_PASS_MS = 200;
const STALLED_MINUTES = 15;
const PENDING_MINUTES = 12;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!hasPromtool)('alerts fired from a real service with a slow node, a VSS store past its limit, a stalled reconcile loop or a node\'s writes pending', () => {
  let t: TestServer;
  let owner: TestUser;
  let node: string;
  /** A node that keeps no state in VSS (continuous state off): the store grown past the limit is its. */
  let withoutVss: string;
  let instance: string;
  const scrapes: { slowNode: TimedScrape[]; pastLimit: TimedScrape[]; stalled: TimedScrape[]; passingAgain?: TimedScrape; pending: TimedScrape[]; drained?: TimedScrape } = {
    slowNode: [],
    pastLimit: [],
    stalled: [],
    pending: [],
  };
  /** What the gateway answered the node's state changes while VSS refused its writes, and after. */
  const stateChanges: { refused?: number; taken?: number } = {};
  const pendingNodes = (s: TimedScrape) => s.samples.get(series('rlncloud_vss_nodes_with_pending_writes'));
  /** How long (ms) and with what status the gateway answered the balances. */
  const balances: Array<{ status: number; ms: number }> = [];
  /** What the API answered while the reconcile loop was stalled. */
  const servedWhileStalled: number[] = [];
  const lastPass = (s: TimedScrape) => s.samples.get(series('rlncloud_reconcile_last_pass_timestamp_seconds'))!;

  beforeAll(async () => {
    t = await startTestServer({
      DEVNODE_SYNC_DELAY_MS: String(SYNC_MS),
      VSS_MAX_BYTES_PER_NODE: String(SOFT_LIMIT_BYTES),
      RECONCILE_INTERVAL_MS: String(RECONCILE_PASS_MS),
      VSS_PENDING_CHECK_INTERVAL_MS: '1000',
    });
    instance = `127.0.0.1:${t.config.metricsPort}`;
    owner = await t.createUser();
    [node, withoutVss] = await createNodes(t, owner, [{ name: 'slow-indexer' }, { name: 'without-vss', settings: { continuousState: false } }]);
    await initWallet(t, owner, node);
    await unlock(t, owner, node);

    // The node's balance asked through the bearer gateway, each answer after a wallet sync: twenty
    // calls 300 ms apart, a scrape as each ends, twenty minutes of slow answers.
    const balance = async () => {
      const started = Date.now();
      const r = await rawRequest(t.config.nodeApiUrl, `/${owner.id}/${node}/btcbalance`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ skip_sync: false }),
      });
      return { status: r.status, ms: Date.now() - started };
    };
    scrapes.slowNode.push(await scrapeTarget(instance));
    const calls = Array.from({ length: SLOW_MINUTES }, (_, i) => sleep(i * 300).then(balance));
    for (const call of calls) {
      balances.push(await call);
      scrapes.slowNode.push(await scrapeTarget(instance));
    }

    // The runtime stops answering the reconcile pass's question about the node: the pass waits, the
    // loop with it. A scrape before, then fifteen minutes of the stall, with the API called meanwhile.
    const runtime = t.server.runtime;
    const status = runtime.status.bind(runtime);
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let waiting = false;
    scrapes.stalled.push(await scrapeTarget(instance));
    runtime.status = async (nodeId) => {
      waiting = true;
      await answered;
      return status(nodeId);
    };
    try {
      await until('a reconcile pass waiting on the runtime', async () => waiting, 10_000);
      for (let minute = 1; minute <= STALLED_MINUTES; minute++) {
        await sleep(2 * RECONCILE_PASS_MS);
        servedWhileStalled.push((await t.call('/api/nodes', { token: owner.token })).status);
        servedWhileStalled.push((await t.call(`/api/nodes/${node}`, { token: owner.token })).status);
        scrapes.stalled.push(await scrapeTarget(instance));
      }
    } finally {
      runtime.status = status;
      answer();
    }
    // The runtime answers again: the pass ends, and the next ones follow.
    const stalledAt = lastPass(scrapes.stalled.at(-1)!);
    scrapes.passingAgain = await until('a reconcile pass after the stall', async () => {
      const s = await scrapeTarget(instance);
      return lastPass(s) > stalledAt && s;
    }, 10_000);

    // The node's writes to VSS fail: a state change (a new address) is written on its volume, not
    // taken by VSS, and stays pending; the meter finds it. A scrape before, then twelve minutes of it.
    const address = () =>
      rawRequest(t.config.nodeApiUrl, `/${owner.id}/${node}/address`, { method: 'POST', headers: { authorization: `Bearer ${owner.token}` } });
    scrapes.pending.push(await scrapeTarget(instance));
    await t.server.db.exec(`
      CREATE FUNCTION refuse_vss_writes() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'VSS writes refused by the test'; END $$;
      CREATE TRIGGER refuse_vss_writes BEFORE INSERT OR UPDATE ON vss_objects FOR EACH ROW EXECUTE FUNCTION refuse_vss_writes();`);
    try {
      stateChanges.refused = (await address()).status;
      await until('the meter to find the pending write', async () => pendingNodes(await scrapeTarget(instance)) === 1, 10_000);
      // Scrapes further apart than reconcile passes, so that the loop is seen passing meanwhile.
      for (let minute = 1; minute <= PENDING_MINUTES; minute++) {
        await sleep(2 * RECONCILE_PASS_MS);
        scrapes.pending.push(await scrapeTarget(instance));
      }
    } finally {
      await t.server.db.exec('DROP TRIGGER refuse_vss_writes ON vss_objects; DROP FUNCTION refuse_vss_writes();');
    }
    stateChanges.taken = (await address()).status;
    scrapes.drained = await until('the meter to find nothing pending', async () => {
      const s = await scrapeTarget(instance);
      return pendingNodes(s) === 0 && s;
    }, 10_000);

    // Last, as it stays: the node's channel state in VSS grows past the soft limit, and the janitor's
    // next measurement (every 5 minutes on each replica; one more here, on the same database) finds it.
    scrapes.pastLimit.push(await scrapeTarget(instance));
    // Its store, not the slow node's: that one is bound to its daemon's key, which writes to it.
    const vss = vssClient(await t.server.services.vss.issueUrl(owner.id, withoutVss), newVssKey());
    expect((await vss.put('s', [{ key: 'channels', version: 0, value: Buffer.alloc(2 * SOFT_LIMIT_BYTES) }])).status).toBe(200);
    await new VssJanitor({ db: t.server.db, blobs: t.server.services.vssBlobs, destroyedRetentionHours: 168, log: createLogger('silent') }).measure();
    scrapes.pastLimit.push(await scrapeTarget(instance));
  }, 120_000);
  afterAll(() => t?.stop());

  it('fires RlnCloudGatewaySlow for the bearer gateway, and nothing else, while the node answers slowly', () => {
    expect(balances.map((b) => b.status)).toEqual(Array(SLOW_MINUTES).fill(200));
    expect(Math.min(...balances.map((b) => b.ms))).toBeGreaterThanOrEqual(SYNC_MS);
    const expectations = expectAll({ RlnCloudGatewaySlow: [{ gateway: 'bearer' }] }, MACHINE_DEPENDENT);
    const result = testRules([{ inputSeries: inputSeries(scrapes.slowNode, instance, 25), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it('fires RlnCloudVssStoreOverSoftLimit, and nothing else, once a store measured past the limit', () => {
    const past = (s: TimedScrape) => s.samples.get(series('rlncloud_vss_stores_over_soft_limit'));
    expect(scrapes.pastLimit.map(past)).toEqual([0, 1]);
    const expectations = expectAll({ RlnCloudVssStoreOverSoftLimit: [{}] }, MACHINE_DEPENDENT);
    const result = testRules([{ inputSeries: inputSeries(scrapes.pastLimit, instance, 20), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it("fires RlnCloudVssPendingWrites, and nothing else, while a node's state change waits for VSS to take it", () => {
    // The daemon does not acknowledge a change VSS did not take (devnode answers 503, as RLN's fork).
    expect(stateChanges).toEqual({ refused: 503, taken: 200 });
    expect(scrapes.pending.map(pendingNodes)).toEqual([0, ...Array(PENDING_MINUTES).fill(1)]);
    const expectations = expectAll({ RlnCloudVssPendingWrites: [{}] }, MACHINE_DEPENDENT);
    const result = testRules([{ inputSeries: inputSeries(scrapes.pending, instance, 5), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it('stops firing RlnCloudVssPendingWrites once VSS took the write', () => {
    const expectations = [{ alert: 'RlnCloudVssPendingWrites', evalTime: '15m', firing: [] }];
    const result = testRules([{ inputSeries: inputSeries([...scrapes.pending, scrapes.drained!], instance, 5), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it('fires RlnCloudReconcileStalled, and nothing else, while the reconcile pass waits on the runtime and the API serves', () => {
    expect(servedWhileStalled).toEqual(Array(2 * STALLED_MINUTES).fill(200));
    // No pass completed between the stalled scrapes.
    expect(new Set(scrapes.stalled.slice(1).map(lastPass)).size).toBe(1);
    const expectations = expectAll({ RlnCloudReconcileStalled: [{}] }, MACHINE_DEPENDENT);
    const result = testRules([{ inputSeries: inputSeries(scrapes.stalled, instance, 15), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it('stops firing RlnCloudReconcileStalled once the loop passes again', () => {
    const expectations = [{ alert: 'RlnCloudReconcileStalled', evalTime: '25m', firing: [] }];
    const result = testRules([{ inputSeries: inputSeries([...scrapes.stalled, scrapes.passingAgain!], instance, 15), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });
});
