// K8S_PEER_SERVICE_TYPE=HostPort on the test cluster: each node's Lightning peer port is bound on
// the machine its pod runs on, at a port of K8S_PEER_PORT_RANGE that no other node holds, with no
// Service per node. The fleet it holds is the range's size (10,000 ports by default): proven here
// with a range of two, which two nodes fill, a third is refused, and a destroyed node's port is
// handed out again. Peers reach a node at the machine's address and its port.
import net from 'node:net';
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { deleteNamespace, describeOnCluster, kubectl, kubectlGet, testKubeconfig, testNamespace, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';

/** Whether a TCP connection to host:port is accepted (devnode accepts, then closes it). */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 5_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

describeOnCluster('peer ports as host ports from a range (K8S_PEER_SERVICE_TYPE=HostPort, test cluster)', () => {
  const namespace = testNamespace('hostport');
  // A range of two, somewhere in the default one, so parallel runs do not meet.
  const from = 20000 + 2 * randomInt(0, 4999);
  let t: TestServer;
  let alice: TestUser;

  const create = (name: string) => t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name, network: 'regtest' } });

  beforeAll(async () => {
    t = await startTestServer({
      RUNTIME: 'kubernetes', KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '64Mi', NODE_START_TIMEOUT_MS: '120000',
      K8S_PEER_SERVICE_TYPE: 'HostPort', K8S_PEER_PORT_RANGE: `${from}-${from + 1}`, K8S_PEER_HOST: '198.18.1.1', ...SMALL_NODE_PODS,
    });
    alice = await t.createUser();
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await deleteNamespace(namespace);
  });

  it('gives each node a port of the range on its machine, refuses a node past the range, and hands a destroyed node\'s port out again', async () => {
    // Nothing answers there before a node holds the port.
    expect(await accepts('198.18.1.1', from)).toBe(false);
    const ids: string[] = [];
    for (const name of ['h1', 'h2']) {
      const r = await create(name);
      expect(r.status, r.text).toBe(200);
      ids.push(r.json.data.nodeId);
    }
    const running = [];
    for (const id of ids) running.push(await t.waitForStatus(alice, id, 'RUNNING', 180_000));
    expect(running.map((n) => [n.peerDNS, n.peerPort]).sort()).toEqual([['198.18.1.1', from], ['198.18.1.1', from + 1]]);

    for (const [i, id] of ids.entries()) {
      const pod = await kubectlGet(namespace, 'pod', `rln-${id}-0`);
      const peer = pod.spec.containers[0].ports.find((p: any) => p.name === 'peer');
      expect(peer).toMatchObject({ containerPort: 9735, hostPort: running[i].peerPort });
      // No Service per node for peers: only the REST one.
      expect((await kubectl(['-n', namespace, 'get', 'services', '-l', `rln-cloud/node-id=${id}`, '-o', 'name'])).trim()).toBe(`service/rln-${id}`);
      // The shared address and the node's port reach the daemon's peer port.
      expect(await accepts('198.18.1.1', running[i].peerPort), `198.18.1.1:${running[i].peerPort}`).toBe(true);
    }

    // The range is the fleet's size: a third node has no port.
    const refused = await create('h3');
    expect(refused.status, refused.text).toBe(503);
    expect(refused.json.error.code).toBe('no_ports_available');
    // ...which the peer-port metric says beforehand (RlnCloudNodePortsNearlyExhausted reads it).
    const exposition = await (await fetch(`http://127.0.0.1:${t.config.metricsPort}/metrics`)).text();
    expect(exposition).toContain('rlncloud_node_ports{state="used"} 2\n');
    expect(exposition).toContain('rlncloud_node_ports{state="free"} 0\n');

    // A destroyed node gives its port back.
    const holder = ids[running.findIndex((n) => n.peerPort === from)]!;
    const destroyed = await t.call('/api/nodes', { method: 'DELETE', token: alice.token, body: { destroyNodeId: holder } });
    expect(destroyed.status, destroyed.text).toBe(200);
    await t.waitForStatus(alice, holder, 'DESTROYED', 180_000);
    const again = await create('h4');
    expect(again.status, again.text).toBe(200);
    const fourth = await t.waitForStatus(alice, again.json.data.nodeId, 'RUNNING', 180_000);
    expect([fourth.peerDNS, fourth.peerPort]).toEqual(['198.18.1.1', from]);
    expect(await accepts('198.18.1.1', from)).toBe(true);
  }, 900_000);
});
