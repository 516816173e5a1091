// A restore that supersedes its source restores the wallet only once the source's daemon has
// stopped: the source's stop build and the copy's create build run side by side, and the wallet
// must never be live in two daemons at once (an unlocked source keeps running LDK on its own).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { backUp, initWallet, nodeRecord, PASSWORD, unlock } from './backup-helpers.ts';

describe(`a restore waits for the node it supersedes to stop, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let sourceId: string;
  let backup: any;

  beforeAll(async () => {
    t = await startTestServer();
    ({ alice } = await createTenants(t));
    [sourceId] = await createNodes(t, alice, [{ name: 'source' }]);
    await initWallet(t, alice, sourceId);
    await unlock(t, alice, sourceId);
    backup = await backUp(t, alice, sourceId);
    expect(backup.status).toBe('SUCCEEDED');
  });
  afterAll(() => t?.stop());

  it("restores nothing while the source's daemon still runs, and carries on once it has stopped", async () => {
    const runtime = t.server.runtime;
    const realStop = runtime.stop.bind(runtime);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // The source's stop is slow (a pod's grace period, a busy host).
    runtime.stop = async (nodeId: string) => {
      if (nodeId === sourceId) await held;
      return realStop(nodeId);
    };
    try {
      const r = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'copy', network: 'regtest', restore: { backupId: backup.backupId, password: PASSWORD, supersedeSource: true } } });
      expect(r.status, r.text).toBe(200);
      const copyId = r.json.data.nodeId;
      // Long enough for the copy's daemon to start and its restore to run, were it not waiting.
      await new Promise((res) => setTimeout(res, 6_000));
      expect((await runtime.status(sourceId)).state).toBe('running');
      const [pending] = await t.server.db.query<{ status: string }>('SELECT status FROM node_restores WHERE node_id = $1', [copyId]);
      expect(pending!.status).not.toBe('SUCCEEDED');
      expect((await nodeRecord(t, alice, copyId)).initialized).toBe(false);
      release();
      await expect.poll(async () => (await nodeRecord(t, alice, copyId)).status, { timeout: 60_000, interval: 200 }).toBe('RUNNING');
      expect(await nodeRecord(t, alice, copyId)).toMatchObject({ initialized: true, locked: true });
      expect((await runtime.status(sourceId)).state).not.toBe('running');
    } finally {
      release();
      runtime.stop = realStop;
    }
  });
});
