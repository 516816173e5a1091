// Issue #43's "Done when" on the test cluster (RUNTIME=kubernetes), the story of
// test/nodes/continuous-state-recovery.test.ts with the claim deleted: a node with continuous state
// makes state changes (receive addresses, whose index it writes to the service's VSS store before
// answering); its volume claim is deleted; it reads STORAGE_LOST; recover and the wallet's mnemonic
// through the node path bring it back on a new claim with the same wallet (node pubkey) and the
// same state (the address index continues: only VSS had it); a stale copy of its old volume that
// comes back (a devnode on this machine, on a copy of the old persistent volume's files, with the
// node's own --vss-url) is refused by the fence. Last, its daemon is killed and the kubelet
// restarts it inside the same pod: the fence the killed daemon held is released by the service,
// so the new daemon unlocks (it would answer VssFenced otherwise) and the state goes on.
//
// Node pods must reach the service's VSS server: the service listens on the cluster machine's own
// address (198.18.1.1, scripts/test-cluster.sh's NODE_IP, which pods reach through cni0), not on
// loopback, and VSS_NODE_URL names it.
import { cpSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { CONTAINER, DATA_MOUNT, STORAGE_DIR } from '../../src/runtime/kubernetes/objects.ts';
import { freePort } from '../helpers/ports.ts';
import { rawRequest } from '../gateway/gateway-client.ts';
import { deleteNamespace, describeOnCluster, killContainer, kubectl, kubectlGet, testKubeconfig, testNamespace, until, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';
import { cleanUpDevnodes, startNode, stopNode, tempStorage, type DevnodeProcess } from '../../devnode/process-for-tests.ts';
import { receiveAddress } from '../../devnode/address.ts';
import { deriveIdentity } from '../../devnode/wallet.ts';
import { generateMnemonic } from '../../devnode/mnemonic.ts';

const PASSWORD = 'continuous-state-recovery-1';
/** The test cluster's machine address (scripts/test-cluster.sh NODE_IP): pods reach it, unlike loopback. */
const CLUSTER_MACHINE = '198.18.1.1';
const ADDRESSES_BEFORE_LOSS = 3;

describeOnCluster('a node with continuous state whose claim is deleted comes back from VSS (test cluster)', () => {
  const namespace = testNamespace('vss-lost');
  let t: TestServer;
  let alice: TestUser;
  let nodeId: string;
  const mnemonic = generateMnemonic();
  let pubkey: string;
  const issued: string[] = [];
  const staleStorage = tempStorage();
  let stale: DevnodeProcess | undefined;
  const claim = () => `data-rln-${nodeId}-0`;

  const node = async (path: string, body?: object) => {
    const r = await rawRequest(t.config.nodeApiUrl, `/${alice.id}/${nodeId}/${path}`, {
      method: body ? 'POST' : 'GET',
      body: body && JSON.stringify(body),
      headers: { authorization: `Bearer ${alice.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    });
    return { status: r.status, json: r.json as any, text: r.text };
  };
  const record = async () => (await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data;
  const addressAt = (index: number) => receiveAddress('regtest', deriveIdentity(mnemonic).addressSeed, index);
  const newAddress = async () => {
    const r = await node('address', {});
    expect(r.status, r.text).toBe(200);
    return r.json.address as string;
  };
  const storeKeys = async () =>
    (await t.server.db.query<{ key: string }>('SELECT key FROM vss_objects WHERE node_id = $1 ORDER BY key', [nodeId])).map((r) => r.key);
  /**
   * The daemon's --vss-url: the StatefulSet names it (`$(RLN_VSS_URL)`, expanded by the kubelet) and
   * the node's Secret holds it (runtime/kubernetes/objects.ts).
   */
  const daemonVssUrl = async () => {
    const sts = await kubectlGet(namespace, 'statefulset', `rln-${nodeId}`);
    const args: string[] = sts.spec.template.spec.containers[0].args;
    expect(args.slice(args.indexOf('--vss-url'))).toEqual(['--vss-url', '$(RLN_VSS_URL)', '--vss-allow-http']);
    const secret = await kubectlGet(namespace, 'secret', `rln-${nodeId}-vss`);
    return Buffer.from(secret.data.url, 'base64').toString();
  };

  beforeAll(async () => {
    const apiPort = await freePort();
    t = await startTestServer({
      RUNTIME: 'kubernetes', KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '64Mi', NODE_START_TIMEOUT_MS: '120000', ...SMALL_NODE_PODS,
      HOST: CLUSTER_MACHINE, API_PORT: String(apiPort), VSS_NODE_URL: `http://${CLUSTER_MACHINE}:${apiPort}`,
    });
    alice = await t.createUser();
    const r = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'continuous', network: 'regtest', settings: { continuousState: true } } });
    expect(r.status, r.text).toBe(200);
    nodeId = r.json.data.nodeId;
    await t.waitForStatus(alice, nodeId, 'RUNNING', 120_000);
  }, 300_000);
  afterAll(async () => {
    if (stale) await stopNode(stale);
    await t?.stop();
    await deleteNamespace(namespace);
    cleanUpDevnodes();
  });

  it('initialised with a mnemonic through the node path, it writes its state changes to VSS from its pod', async () => {
    expect((await daemonVssUrl()).startsWith(`http://${CLUSTER_MACHINE}:`)).toBe(true);
    expect((await node('init', { password: PASSWORD, mnemonic })).status).toBe(200);
    const unlocked = await node('unlock', { password: PASSWORD });
    expect(unlocked.status, unlocked.text).toBe(200);
    pubkey = (await node('nodeinfo')).json.pubkey;
    expect(await storeKeys()).toEqual(['__rln_instance__']);
    for (let i = 0; i < ADDRESSES_BEFORE_LOSS; i++) issued.push(await newAddress());
    expect(issued).toEqual([0, 1, 2].map(addressAt));
    expect((await node('vssbackupinfo')).json).toEqual({ backup_exists: true, server_version: 1, backup_required: false, pending_kv_writes: 0 });
    expect(await storeKeys()).toEqual(['__rln_instance__', 'manager']);

    // A copy of the volume as it is now (the cluster's hostPath persistent volume): a stale copy of the node.
    const claimed = await kubectlGet(namespace, 'pvc', claim());
    const volume = JSON.parse(await kubectl(['get', 'pv', claimed.spec.volumeName, '-o', 'json']));
    cpSync(join(volume.spec.hostPath.path, relative(DATA_MOUNT, STORAGE_DIR)), staleStorage, { recursive: true });
  }, 120_000);

  it('its claim deleted, it reads STORAGE_LOST', async () => {
    await kubectl(['-n', namespace, 'delete', 'pvc', claim(), '--wait=false']);
    await until('the node to be STORAGE_LOST', async () => (await record()).status === 'STORAGE_LOST', 90_000, record);
    expect(await record()).toMatchObject({ status: 'STORAGE_LOST', locked: true });
    // The timeline shows an event once every transaction older than it has ended (db/node-event-feed.ts).
    await until('the timeline to show NODE_STORAGE_LOST', async () => (await t.call(`/api/nodes/${nodeId}/events`, { token: alice.token })).text.includes('NODE_STORAGE_LOST'), 30_000);
    await until('the old claim to go', async () => !(await kubectlGet(namespace, 'pvc', claim())), 120_000);
  }, 300_000);

  it('recovered on a new claim and given the mnemonic, it is the same wallet with the same state', async () => {
    const r = await t.call(`/api/nodes/${nodeId}/recover`, { method: 'POST', token: alice.token });
    expect(r.status, r.text).toBe(200);
    await t.waitForStatus(alice, nodeId, 'RUNNING', 180_000);
    expect(await record()).toMatchObject({ initialized: false, locked: true });
    expect((await node('init', { password: PASSWORD, mnemonic })).status).toBe(200);
    const unlocked = await node('unlock', { password: PASSWORD });
    expect(unlocked.status, unlocked.text).toBe(200);
    expect((await node('nodeinfo')).json.pubkey).toBe(pubkey);
    expect(await newAddress()).toBe(addressAt(ADDRESSES_BEFORE_LOSS));
  }, 300_000);

  it('a stale copy of the old volume on the same VSS URL is refused by the fence; the recovered node goes on', async () => {
    const values = async () =>
      (await t.server.db.query<{ key: string; value: Buffer }>('SELECT key, value FROM vss_objects WHERE node_id = $1 ORDER BY key', [nodeId])).map((r) => `${r.key}=${Buffer.from(r.value).toString('hex')}`);
    const before = await values();
    stale = await startNode(staleStorage, { auth: ['--disable-authentication', '--vss-url', await daemonVssUrl(), '--vss-allow-http'] });
    const refused = await stale.call('POST', '/unlock', { password: PASSWORD });
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body.name).toBe('VssFenced');
    expect(await values()).toEqual(before);
    await stopNode(stale);
    stale = undefined;
    expect(await newAddress()).toBe(addressAt(ADDRESSES_BEFORE_LOSS + 1));
  }, 120_000);

  it('its daemon killed and restarted by the kubelet in the same pod, the fence it held is released and the new daemon unlocks', async () => {
    const pod = `rln-${nodeId}-0`;
    const daemon = async () => (await kubectlGet(namespace, 'pod', pod))?.status?.containerStatuses?.find((c: any) => c.name === CONTAINER);
    const fence = async () =>
      (await t.server.db.query<{ value: Buffer }>(`SELECT value FROM vss_objects WHERE node_id = $1 AND key = '__rln_instance__'`, [nodeId])).map((r) => Buffer.from(r.value).toString())[0];
    const { uid } = (await kubectlGet(namespace, 'pod', pod)).metadata;
    const restartsBefore: number = (await daemon()).restartCount;
    const heldBefore = await fence();
    expect(heldBefore).toMatch(/^[0-9a-f-]{36}$/);

    expect(await killContainer(namespace, pod, CONTAINER)).toBeGreaterThan(0);
    await until('the kubelet to restart the daemon', async () => ((await daemon())?.restartCount ?? 0) > restartsBefore, 120_000, daemon);
    expect((await kubectlGet(namespace, 'pod', pod)).metadata.uid).toBe(uid); // the same pod: only its container restarted
    await until('the killed daemon’s fence to be released', async () => (await fence()) !== heldBefore, 30_000, fence);

    // The new daemon is locked; once it answers, an unlock takes the fence as its own.
    const unlocked = await until(
      'the restarted daemon to answer an unlock',
      async () => {
        const r = await node('unlock', { password: PASSWORD });
        return r.status === 502 || r.status === 503 ? false : r;
      },
      120_000,
    );
    expect(unlocked.status, unlocked.text).toBe(200);
    expect(await fence()).toMatch(/^[0-9a-f-]{36}$/);
    expect(await fence()).not.toBe(heldBefore);
    expect((await node('nodeinfo')).json.pubkey).toBe(pubkey);
    expect(await newAddress()).toBe(addressAt(ADDRESSES_BEFORE_LOSS + 2));
  }, 300_000);
});
