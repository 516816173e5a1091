// A node's VSS store measured and held to VSS_MAX_BYTES_PER_NODE, a soft limit (docs/VSS.md): past
// it writes are still accepted (a refused write stalls the node's channels), the node's answer
// (GET /api/nodes/{id} and the list, `vss`) says so, and rlncloud_vss_stores_over_soft_limit
// counts the store for the alert; another account does not see the node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { createNodes } from '../helpers/tenants.ts';
import { databaseLabel } from '../helpers/database.ts';
import { newVssKey, vssClient } from '../helpers/vss-client.ts';
import { parseExposition, series } from '../helpers/metrics.ts';
import { createLogger } from '../../src/logger.ts';
import { VssJanitor } from '../../src/vss/vss-janitor.ts';

const LIMIT = 1000;

describe(`the VSS soft limit, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let measure: () => Promise<number>;

  beforeAll(async () => {
    t = await startTestServer({ VSS_MAX_BYTES_PER_NODE: String(LIMIT) });
    alice = await t.createUser();
    bob = await t.createUser();
    const janitor = new VssJanitor({ db: t.server.db, blobs: t.server.services.vssBlobs, destroyedRetentionHours: 168, log: createLogger('silent') });
    measure = () => janitor.measure();
  }, 60_000);
  afterAll(() => t?.stop());

  const overLimit = async () => parseExposition(await t.server.metrics.registry.metrics()).samples.get(series('rlncloud_vss_stores_over_soft_limit'));
  const nodeAnswer = async (token: string, id: string) => {
    const r = await t.call(`/api/nodes/${id}`, { token });
    return { status: r.status, vss: r.json?.data?.vss, listed: (await t.call('/api/nodes', { token })).json.nodes?.find((n: { nodeId: string }) => n.nodeId === id)?.vss };
  };

  it('shows no VSS use on a node without a store, nor before its store is measured', async () => {
    // Without continuous state: a node's first start would make its store.
    const [plain, issued] = await createNodes(t, alice, [{ name: 'plain', settings: { continuousState: false } }, { name: 'issued' }], { untilRunning: false });
    await t.server.services.vss.issueUrl(alice.id, issued!);
    expect((await nodeAnswer(alice.token, plain!)).vss).toBeNull();
    expect((await nodeAnswer(alice.token, issued!)).vss).toBeNull();
    await measure();
    expect((await nodeAnswer(alice.token, plain!)).vss).toBeNull();
    expect((await nodeAnswer(alice.token, issued!)).vss).toMatchObject({ usedBytes: 0, softLimitBytes: LIMIT });
  });

  it('accepts writes past the limit, and the node answer and the gauge say the store is past it', async () => {
    const before = (await overLimit()) ?? 0;
    const [node] = await createNodes(t, alice, [{ name: 'big' }], { untilRunning: false });
    const client = vssClient(await t.server.services.vss.issueUrl(alice.id, node!), newVssKey());
    expect((await client.put('s', [{ key: 'a', version: 0, value: Buffer.alloc(600) }])).status).toBe(200);
    await measure();
    const under = await nodeAnswer(alice.token, node!);
    expect(under.status).toBe(200);
    expect(under.vss).toEqual({ usedBytes: 600, softLimitBytes: LIMIT, measuredAt: expect.any(String) });
    expect(new Date(under.vss.measuredAt).toISOString()).toBe(under.vss.measuredAt);
    expect(under.listed).toEqual(under.vss);
    expect(await overLimit()).toBe(before);

    // Past the limit: still written, and readable.
    expect((await client.put('s', [{ key: 'b', version: 0, value: Buffer.alloc(600) }])).status).toBe(200);
    expect((await client.put('s', [{ key: 'c', version: -1, value: Buffer.alloc(300 * 1024) }])).status).toBe(200);
    expect((await client.get('s', 'b')).status).toBe(200);
    await measure();
    const past = await nodeAnswer(alice.token, node!);
    expect(past.vss).toMatchObject({ usedBytes: 1200 + 300 * 1024, softLimitBytes: LIMIT });
    expect(past.listed).toEqual(past.vss);
    expect(await overLimit()).toBe(before + 1);

    // Back under it: the gauge follows at the next measurement.
    expect((await client.put('s', [], { deletes: [{ key: 'c', version: -1 }, { key: 'b', version: -1 }] })).status).toBe(200);
    await measure();
    expect((await nodeAnswer(alice.token, node!)).vss.usedBytes).toBe(600);
    expect(await overLimit()).toBe(before);
  });

  it("does not count a destroyed node's store, kept for its retention", async () => {
    const [node] = await createNodes(t, alice, [{ name: 'doomed' }], { untilRunning: false });
    const client = vssClient(await t.server.services.vss.issueUrl(alice.id, node!), newVssKey());
    await client.put('s', [{ key: 'a', version: 0, value: Buffer.alloc(2000) }]);
    await measure();
    const before = await overLimit();
    await t.server.db.query(`UPDATE nodes SET status = 'DESTROYED', destroyed_at = now() WHERE id = $1`, [node]);
    expect(await overLimit()).toBe(before! - 1);
  });

  it("is not shown to another account: bob's read of alice's node is a 404", async () => {
    const [node] = await createNodes(t, alice, [{ name: 'private' }], { untilRunning: false });
    await t.server.services.vss.issueUrl(alice.id, node!);
    await measure();
    const r = await t.call(`/api/nodes/${node}`, { token: bob.token });
    expect(r.status).toBe(404);
    expect((await t.call('/api/nodes', { token: bob.token })).json.nodes.map((n: { nodeId: string }) => n.nodeId)).not.toContain(node);
  });
});
