// Backups and restores on RUNTIME=kubernetes, through the public API, on the project's real test
// cluster: an unlocked node's backup file is written by the daemon into its pod's volume and moved
// out by exec; restored into a new node (its file moved in by exec), which comes back with the
// same wallet; the node ends unlocked, and nothing is left in either volume.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { rawRequest } from '../gateway/gateway-client.ts';
import { deleteNamespace, describeOnCluster, kubectl, testKubeconfig, testNamespace, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';
import { backUp, initWallet, nodeRecord, PASSWORD, unlock } from '../backups/backup-helpers.ts';

describeOnCluster('backups on the kubernetes runtime (test cluster)', () => {
  const namespace = testNamespace('backups');
  let t: TestServer;
  let alice: TestUser;
  const gateway = (nodeId: string, path: string, method = 'GET') =>
    rawRequest(t.config.nodeApiUrl, `/${alice.id}/${nodeId}${path}`, {
      method,
      body: method === 'POST' ? '{}' : undefined,
      headers: { authorization: `Bearer ${alice.token}`, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
    });
  const volumeFiles = async (nodeId: string) =>
    (await kubectl(['-n', namespace, 'exec', `rln-${nodeId}-0`, '--', 'sh', '-c', 'cd /data/storage && echo *'])).trim().split(/\s+/);
  const clientBackupFiles = async (nodeId: string) =>
    (await kubectl(['-n', namespace, 'exec', `rln-${nodeId}-0`, '--', 'sh', '-c', 'cd /data/client-backups && echo *'])).trim().split(/\s+/);
  const created = async (body: object) => {
    const r = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { network: 'regtest', ...body } });
    expect(r.status, r.text).toBe(200);
    return r.json.data.nodeId as string;
  };

  beforeAll(async () => {
    t = await startTestServer({ RUNTIME: 'kubernetes', KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '64Mi', NODE_START_TIMEOUT_MS: '120000', NODE_STORAGE_CHECK_INTERVAL_MS: '1000', ...SMALL_NODE_PODS });
    alice = await t.createUser();
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await deleteNamespace(namespace);
  });

  it('backs up an unlocked node from its pod and restores it into a new pod with the same wallet', async () => {
    const sourceId = await created({ name: 'k8s-source' });
    await t.waitForStatus(alice, sourceId, 'RUNNING', 120_000);
    await initWallet(t, alice, sourceId);
    await unlock(t, alice, sourceId);
    const info = await gateway(sourceId, '/nodeinfo');
    expect(info.status, info.text).toBe(200);
    const pubkey = JSON.parse(info.text).pubkey;

    const backup = await backUp(t, alice, sourceId);
    expect(backup, JSON.stringify(backup)).toMatchObject({ status: 'SUCCEEDED', sizeBytes: expect.any(Number) });
    expect((await nodeRecord(t, alice, sourceId)).locked).toBe(false);
    expect((await volumeFiles(sourceId)).filter((f) => f.startsWith('rln-cloud-backup-'))).toEqual([]);

    // The source still runs: one live copy of a wallet, so the restore supersedes it (its pod stops first).
    const restoredId = await created({ name: 'k8s-restored', restore: { backupId: backup.backupId, password: PASSWORD, supersedeSource: true } });
    const restored = await t.waitForStatus(alice, restoredId, 'RUNNING', 180_000);
    expect(restored).toMatchObject({ locked: true, initialized: true });
    // Its source was stopped before the wallet came back, and stays fenced.
    expect((await nodeRecord(t, alice, sourceId)).status).toBe('PAUSED');
    expect((await t.call(`/api/nodes/${sourceId}/start`, { method: 'POST', token: alice.token })).json.error.code).toBe('node_superseded');
    await unlock(t, alice, restoredId);
    expect(JSON.parse((await gateway(restoredId, '/nodeinfo')).text).pubkey).toBe(pubkey);
    expect((await volumeFiles(restoredId)).filter((f) => f.startsWith('rln-cloud-backup-'))).toEqual([]);
  }, 420_000);

  it("keeps a backup made through the node path beside the node's storage, not in it, and shows the volume's use on the node", async () => {
    const nodeId = await created({ name: 'k8s-node-path' });
    await t.waitForStatus(alice, nodeId, 'RUNNING', 120_000);
    await initWallet(t, alice, nodeId);
    await unlock(t, alice, nodeId);
    // RLN backs up a locked node only.
    const locked = await gateway(nodeId, '/lock', 'POST');
    expect(locked.status, locked.text).toBe(200);
    const made = await rawRequest(t.config.nodeApiUrl, `/${alice.id}/${nodeId}/backup`, {
      method: 'POST',
      body: JSON.stringify({ backup_path: 'mine', password: PASSWORD }),
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
    });
    expect(made.status, made.text).toBe(200);
    expect(await clientBackupFiles(nodeId)).toEqual(['rln-cloud-backup-user-mine']);
    expect((await volumeFiles(nodeId)).filter((f) => f.startsWith('rln-cloud-backup-'))).toEqual([]);

    // Measured in the pod while it runs: its files and the volume they are on.
    const deadline = Date.now() + 60_000;
    let storage: { usedBytes: number; capacityBytes: number; availableBytes: number } | null = null;
    while (!storage && Date.now() < deadline) {
      storage = (await nodeRecord(t, alice, nodeId)).storage;
      if (!storage) await new Promise((r) => setTimeout(r, 500));
    }
    expect(storage, 'a measurement within a minute').not.toBeNull();
    expect(storage!.usedBytes).toBeGreaterThan(0);
    expect(storage!.capacityBytes).toBeGreaterThanOrEqual(storage!.usedBytes);
    expect(storage!.availableBytes).toBeLessThanOrEqual(storage!.capacityBytes);
  }, 300_000);
});
