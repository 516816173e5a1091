// Restoring a backup into a new node through real HTTP against real devnode daemons: the new node
// ends RUNNING, locked, with the same wallet (same pubkey, same addresses); from a backup of a node
// or from an uploaded file. A wrong password or a corrupt file ends its create build FAILURE with
// the reason and the node FAILED, never RUNNING without its wallet; the sealed password is erased
// either way; other users' backups, unfinished ones and the other network are refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { insertNodeBackup } from '../../src/db/backups.ts';
import { backUp, download, initWallet, nodeRecord, PASSWORD, unlock } from './backup-helpers.ts';

describe(`restore into a new node, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let sourceId: string;
  let pubkey: string;
  let firstAddress: string;
  let backup: any;

  const gateway = async (user: TestUser, nodeId: string, route: string) => {
    const res = await fetch(`${t.config.nodeApiUrl}/${user.id}/${nodeId}/${route}`, {
      method: route === 'nodeinfo' ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: route === 'nodeinfo' ? undefined : '{}',
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  const createFrom = (user: TestUser, restore: unknown, network = 'regtest') =>
    t.call('/api/nodes', { method: 'POST', token: user.token, body: { name: 'restored', network, restore } });
  /** Waits for the node's create build to finish; answers the node. */
  const settled = async (user: TestUser, nodeId: string) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const node = await nodeRecord(t, user, nodeId);
      if (node.status === 'RUNNING' || node.status === 'FAILED') return node;
      if (Date.now() > deadline) throw new Error(`node ${nodeId} still ${node.status}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  };

  beforeAll(async () => {
    t = await startTestServer();
    ({ alice, bob } = await createTenants(t));
    [sourceId] = await createNodes(t, alice, [{ name: 'source' }]);
    await initWallet(t, alice, sourceId);
    await unlock(t, alice, sourceId);
    pubkey = (await gateway(alice, sourceId, 'nodeinfo')).json.pubkey;
    firstAddress = (await gateway(alice, sourceId, 'address')).json.address;
    expect(pubkey).toEqual(expect.any(String));
    backup = await backUp(t, alice, sourceId);
    expect(backup.status).toBe('SUCCEEDED');
  });
  afterAll(() => t?.stop());

  let firstCopy: string;
  let secondCopy: string;

  it('refuses to restore the backup of a node that still exists: 409 source_node_live, naming the options', async () => {
    const r = await createFrom(alice, { backupId: backup.backupId, password: PASSWORD });
    expect(r.status, r.text).toBe(409);
    expect(r.json.error).toMatchObject({ code: 'source_node_live', details: { sourceNodeId: sourceId } });
    expect(r.json.error.message).toContain('supersedeSource');
    expect(r.json.error.message).toContain('Destroy');
    expect((await t.call('/api/nodes', { token: alice.token })).json.nodes).toHaveLength(1);
  });

  it('restores a backup into a new node, superseding its source: RUNNING, locked, initialised, the same wallet once unlocked', async () => {
    const r = await createFrom(alice, { backupId: backup.backupId, password: PASSWORD, supersedeSource: true });
    expect(r.status, r.text).toBe(200);
    const nodeId = r.json.data.nodeId;
    firstCopy = nodeId;
    const node = await settled(alice, nodeId);
    expect(node).toMatchObject({ status: 'RUNNING', locked: true, initialized: true });
    expect(node.builds.at(-1)).toMatchObject({ action: 'create', buildStatus: 'SUCCESS' });
    await unlock(t, alice, nodeId);
    expect((await gateway(alice, nodeId, 'nodeinfo')).json.pubkey).toBe(pubkey);
    // The wallet's address index came with the backup (devnode-kv, as RLN keeps it): the next address, not the first again.
    const next = (await gateway(alice, nodeId, 'address')).json.address;
    expect(next).toMatch(/^bcrt1q/);
    expect(next).not.toBe(firstAddress);
    // The password was kept sealed only until the restore ended.
    const [restore] = await t.server.db.query<{ status: string; sealed_password: string | null }>('SELECT * FROM node_restores WHERE node_id = $1', [nodeId]);
    expect(restore).toMatchObject({ status: 'SUCCEEDED', sealed_password: null });
    const everything = JSON.stringify([await t.server.db.query('SELECT * FROM node_restores'), await t.server.db.query('SELECT * FROM jobs'), await t.server.db.query('SELECT * FROM idempotency_keys').catch(() => [])]);
    expect(everything).not.toContain(PASSWORD);
  });

  it('the superseded source is stopped and never runs again: start, upgrade, automatic unlock and its gateway answer 409 node_superseded', async () => {
    await expect.poll(async () => (await nodeRecord(t, alice, sourceId)).status, { timeout: 30_000 }).toBe('PAUSED');
    const [row] = await t.server.db.query<{ superseded_by: string; desired_state: string }>('SELECT superseded_by, desired_state FROM nodes WHERE id = $1', [sourceId]);
    expect(row).toEqual({ superseded_by: firstCopy, desired_state: 'stopped' });
    for (const [method, path, body] of [
      ['POST', 'start', undefined],
      ['POST', 'upgrade', undefined],
      ['PUT', 'auto-unlock', { password: PASSWORD }],
    ] as const) {
      const refused = await t.call(`/api/nodes/${sourceId}/${path}`, { method, token: alice.token, body });
      expect(refused.status, `${path}: ${refused.text}`).toBe(409);
      expect(refused.json.error, path).toMatchObject({ code: 'node_superseded', details: { supersededBy: firstCopy } });
    }
    const viaGateway = await gateway(alice, sourceId, 'nodeinfo');
    expect(viaGateway.status).toBe(409);
    // Destroying it is what is left.
    expect((await nodeRecord(t, alice, sourceId)).status).toBe('PAUSED');
  });

  it('restores from an uploaded file', async () => {
    const bytes = new Uint8Array(await download(backup.downloadUrl));
    const res = await fetch(`${t.base}/api/backups/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    expect(res.status).toBe(201);
    const uploaded = (await res.json()) as { backupId: string; sourceNodeId: string; network: string };
    // Recognised as the source's backup: tied to it, so the same fence applies, now to the wallet's live copy.
    expect(uploaded).toMatchObject({ sourceNodeId: sourceId, network: 'regtest' });
    const refused = await createFrom(alice, { backupId: uploaded.backupId, password: PASSWORD });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.error).toMatchObject({ code: 'source_node_live', details: { sourceNodeId: firstCopy } });
    const r = await createFrom(alice, { backupId: uploaded.backupId, password: PASSWORD, supersedeSource: true });
    const node = await settled(alice, r.json.data.nodeId);
    secondCopy = node.nodeId;
    expect(node).toMatchObject({ status: 'RUNNING', initialized: true });
    await unlock(t, alice, node.nodeId);
    expect((await gateway(alice, node.nodeId, 'nodeinfo')).json.pubkey).toBe(pubkey);
  });

  it('a wrong password: the create build fails with the reason and the node is FAILED, its password erased, its source released', async () => {
    const r = await createFrom(alice, { backupId: backup.backupId, password: 'not-the-password', supersedeSource: true, confirmOlderBackup: true });
    expect(r.status, r.text).toBe(200);
    const node = await settled(alice, r.json.data.nodeId);
    expect(node.status).toBe('FAILED');
    expect(node.initialized).toBe(false);
    expect(node.builds.at(-1)).toMatchObject({ action: 'create', buildStatus: 'FAILURE', error: expect.stringMatching(/restore failed: .*password/i) });
    const [restore] = await t.server.db.query<{ status: string; sealed_password: string | null }>('SELECT * FROM node_restores WHERE node_id = $1', [node.nodeId]);
    expect(restore).toMatchObject({ status: 'FAILED', sealed_password: null });
    // Nothing was restored: the node it superseded holds the only copy again and may run.
    const [second] = await t.server.db.query<{ superseded_by: string | null }>('SELECT superseded_by FROM nodes WHERE id = $1', [secondCopy]);
    expect(second!.superseded_by).toBeNull();
  });

  it('a corrupt or truncated file: FAILED with the reason', async () => {
    const bytes = await download(backup.downloadUrl);
    for (const broken of [bytes.subarray(0, bytes.length - 10), Buffer.concat([bytes.subarray(0, 200), Buffer.from([bytes[200]! ^ 1]), bytes.subarray(201)])]) {
      const res = await fetch(`${t.base}/api/backups/uploads?network=regtest`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/octet-stream' },
        body: new Uint8Array(broken),
      });
      const uploaded = (await res.json()) as { backupId: string };
      const r = await createFrom(alice, { backupId: uploaded.backupId, password: PASSWORD });
      const node = await settled(alice, r.json.data.nodeId);
      expect(node.status).toBe('FAILED');
      expect(node.builds.at(-1).error).toMatch(/restore failed: .*(corrupt|truncated)/i);
    }
  });

  it('an upload the service does not recognise is tied to the node it is restored into: a second restore of it meets that node', async () => {
    const res = await fetch(`${t.base}/api/backups/uploads?network=regtest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(Buffer.from('a backup made elsewhere')),
    });
    expect(res.status).toBe(201);
    const uploaded = (await res.json()) as { backupId: string; sourceNodeId: string | null };
    expect(uploaded.sourceNodeId).toBeNull();
    const first = await createFrom(alice, { backupId: uploaded.backupId, password: PASSWORD });
    expect(first.status, first.text).toBe(200);
    const second = await createFrom(alice, { backupId: uploaded.backupId, password: PASSWORD });
    expect(second.status, second.text).toBe(409);
    expect(second.json.error).toMatchObject({ code: 'source_node_live', details: { sourceNodeId: first.json.data.nodeId } });
    // The same file uploaded again is that upload: tied to the same node.
    const reupload = await fetch(`${t.base}/api/backups/uploads?network=regtest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(Buffer.from('a backup made elsewhere')),
    });
    expect(reupload.status).toBe(201);
    expect(await reupload.json()).toMatchObject({ sourceNodeId: first.json.data.nodeId });
    // That restore fails (the file is no backup): nothing was restored, so the upload is free again.
    expect((await settled(alice, first.json.data.nodeId)).status).toBe('FAILED');
    const again = await createFrom(alice, { backupId: uploaded.backupId, password: PASSWORD });
    expect(again.status, again.text).toBe(200);
    expect((await settled(alice, again.json.data.nodeId)).status).toBe('FAILED');
  });

  it("refuses another user's backup, an unfinished one, one of the other network, and a bad body", async () => {
    const foreign = await createFrom(bob, { backupId: backup.backupId, password: PASSWORD });
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe('backup_not_found');
    const running = await insertNodeBackup(t.server.db, {
      id: 'c'.repeat(32), userId: alice.id, nodeId: sourceId, network: 'regtest', imageVersion: 'devnode-0.1.0', wasUnlocked: false, runner: 'elsewhere',
    });
    const unfinished = await createFrom(alice, { backupId: running.id, password: PASSWORD });
    expect(unfinished.status).toBe(409);
    expect(unfinished.json.error.code).toBe('backup_not_ready');
    await t.server.db.query('DELETE FROM backups WHERE id = $1', [running.id]);
    const testnet = await createFrom(alice, { backupId: backup.backupId, password: PASSWORD }, 'testnet');
    expect(testnet.status).toBe(400);
    expect(testnet.json.error.message).toContain('regtest');
    for (const restore of [{ backupId: backup.backupId }, { backupId: 'x', password: PASSWORD }, { backupId: backup.backupId, password: '' }, { ...{ backupId: backup.backupId, password: PASSWORD }, extra: 1 }]) {
      const r = await createFrom(alice, restore);
      expect(r.status, JSON.stringify(restore)).toBe(400);
      expect(r.text).not.toContain(PASSWORD);
    }
    // Nothing was created by any of these.
    const names = (await t.call('/api/nodes', { token: bob.token })).json.nodes;
    expect(names).toEqual([]);
  });

  it("a backup older than the wallet's newest successful one says so, and is restored only with confirmOlderBackup", async () => {
    // The live copy (secondCopy, stopped by the failed restore that superseded it, then released) runs
    // again and is backed up: the source's backup is now the older one.
    const started = await t.call(`/api/nodes/${secondCopy}/start`, { method: 'POST', token: alice.token });
    expect(started.status, started.text).toBeLessThan(300);
    await expect.poll(async () => (await nodeRecord(t, alice, secondCopy)).status, { timeout: 30_000 }).toBe('RUNNING');
    const newer = await backUp(t, alice, secondCopy);
    expect(newer.status).toBe('SUCCEEDED');
    const older = await createFrom(alice, { backupId: backup.backupId, password: PASSWORD, supersedeSource: true });
    expect(older.status, older.text).toBe(409);
    expect(older.json.error).toMatchObject({ code: 'backup_older_than_source', details: { newestBackupId: newer.backupId } });
    expect(older.json.error.message).toContain('confirmOlderBackup');
    const confirmed = await createFrom(alice, { backupId: backup.backupId, password: PASSWORD, supersedeSource: true, confirmOlderBackup: true });
    expect(confirmed.status, confirmed.text).toBe(200);
    const third = await settled(alice, confirmed.json.data.nodeId);
    expect(third.status).toBe('RUNNING');

    // Once the wallet's live copy is destroyed, its newest backup restores without any choice.
    const destroyed = await t.call('/api/nodes', { method: 'DELETE', token: alice.token, body: { destroyNodeId: third.nodeId } });
    expect(destroyed.status, destroyed.text).toBeLessThan(300);
    await expect.poll(async () => (await nodeRecord(t, alice, third.nodeId)).status, { timeout: 30_000 }).toBe('DESTROYED');
    const again = await createFrom(alice, { backupId: newer.backupId, password: PASSWORD });
    expect(again.status, again.text).toBe(200);
    expect((await settled(alice, again.json.data.nodeId)).status).toBe('RUNNING');
    // That restore holds the wallet now: the same backup restored a second time would be a second live copy.
    const twice = await createFrom(alice, { backupId: newer.backupId, password: PASSWORD });
    expect(twice.status, twice.text).toBe(409);
    expect(twice.json.error).toMatchObject({ code: 'source_node_live', details: { sourceNodeId: again.json.data.nodeId } });
  });
});
