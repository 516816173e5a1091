// A node's storage use is measured while it runs (nodes/upkeep/storage-meter.ts) and shown on the node
// (GET /api/nodes/{id} and the list, `storage`) and in the rlncloud_node_storage_fullest_ratio
// gauge. Process runtime, over the node's real files: what lands in its folder is counted.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { parseExposition, series } from '../helpers/metrics.ts';

const MIB = 2 ** 20;

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe(`a node's storage use on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nodeId: string;

  beforeAll(async () => {
    t = await startTestServer({ NODE_STORAGE_CHECK_INTERVAL_MS: '1000' });
    ({ alice, bob } = await createTenants(t));
    [nodeId] = await createNodes(t, alice, [{ name: 'measured' }]);
  });
  afterAll(() => t?.stop());

  it('is measured from the files in the node\'s folder, its volume\'s size and free space beside it', async () => {
    // A backup kept through the node gateways takes room on the node's volume like its storage does.
    const kept = join(t.config.dataDir, 'nodes', nodeId, 'client-backups');
    mkdirSync(kept, { recursive: true });
    writeFileSync(join(kept, 'rln-cloud-backup-user-big'), Buffer.alloc(8 * MIB, 1));
    const node = await until('a measurement counting the 8 MiB file', async () => {
      const r = await t.call(`/api/nodes/${nodeId}`, { token: alice.token });
      expect(r.status, r.text).toBe(200);
      return (r.json.data.storage?.usedBytes ?? 0) >= 8 * MIB && r.json.data;
    }, 60_000);
    const { usedBytes, capacityBytes, availableBytes, measuredAt } = node.storage;
    expect(Number.isInteger(usedBytes)).toBe(true);
    expect(capacityBytes).toBeGreaterThan(usedBytes);
    expect(availableBytes).toBeGreaterThanOrEqual(0);
    expect(availableBytes).toBeLessThanOrEqual(capacityBytes);
    expect(new Date(measuredAt).toISOString()).toBe(measuredAt);
    // The list (written by the database; byte for byte in list-nodes-json.test.ts) shows it too.
    const list = await t.call('/api/nodes', { token: alice.token });
    const listed = list.json.nodes.find((n: { nodeId: string }) => n.nodeId === nodeId);
    expect(Object.keys(listed.storage).sort()).toEqual(['availableBytes', 'capacityBytes', 'measuredAt', 'usedBytes']);
    expect(listed.storage.usedBytes).toBeGreaterThanOrEqual(8 * MIB);
  }, 90_000);

  it("is not shown to another account: bob's read of alice's node is a 404", async () => {
    const r = await t.call(`/api/nodes/${nodeId}`, { token: bob.token });
    expect(r.status).toBe(404);
    expect(r.text).not.toContain('usedBytes');
  });

  it('fills the fullest-volume gauge with the share of the volume in use', async () => {
    const ratio = await until('a measured ratio', async () => {
      const res = await fetch(`http://127.0.0.1:${t.config.metricsPort}/metrics`);
      const value = parseExposition(await res.text()).samples.get(series('rlncloud_node_storage_fullest_ratio'));
      return value !== undefined && value > 0 && value;
    });
    const { storage } = (await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data;
    expect(ratio).toBeLessThanOrEqual(1);
    // The test machine's disk is the volume: the gauge is its share in use, near what the node shows.
    expect(Math.abs(ratio - (1 - storage.availableBytes / storage.capacityBytes))).toBeLessThan(0.05);
  }, 90_000);
});
