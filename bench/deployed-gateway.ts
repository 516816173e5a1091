// The bearer gateway of the service deployed on the test cluster (deploy/kubernetes), through its
// NodePort Service, with one replica and then two, beside the node's own REST port reached
// directly (the pod's address, no gateway): does a second replica add gateway throughput? On a
// 2-core machine the node, the replicas and the load generator share the cores, so the ratio is
// the figure, not the absolute rate.
import { kubectl } from '../test/helpers/kubernetes.ts';
import { deployService, NODES_NAMESPACE, scaleReplicas, URLS, waitForReadyReplicas } from '../test/helpers/deployed-service.ts';
import { keepAliveGetter } from './http-client.ts';
import { runLoad, type LoadResult } from './load.ts';

const CONNECTIONS = 50;

export interface DeployedGatewayFigures {
  oneReplica: LoadResult;
  twoReplicas: LoadResult;
  direct: LoadResult;
}

export async function benchDeployedGateway(durationMs: number): Promise<DeployedGatewayFigures> {
  const svc = await deployService({ replicas: 1 });
  try {
    const user = await svc.createUser('starter');
    const created = await svc.api('/api/nodes', { method: 'POST', token: user.token, body: { name: 'bench', network: 'regtest' } });
    const nodeId = created.json.data.nodeId as string;
    await svc.waitForNode(user, nodeId, 'RUNNING');
    await svc.bearer(user, nodeId, '/init', { method: 'POST', body: { password: 'bench-password-1' } });
    await svc.bearer(user, nodeId, '/unlock', { method: 'POST', body: { password: 'bench-password-1' } });
    const path = `/${user.id}/${nodeId}/nodeinfo`;
    const through = async () => {
      // A new agent per measurement: kept-alive connections stay with the replica they opened to.
      const get = keepAliveGetter(URLS.nodeApi, { authorization: `Bearer ${user.token}` }, CONNECTIONS);
      const call = async () => {
        const status = await get(path);
        if (status !== 200) throw new Error(`the gateway answered ${status}`);
      };
      await runLoad(call, { concurrency: CONNECTIONS, durationMs: 1_000 });
      return runLoad(call, { concurrency: CONNECTIONS, durationMs });
    };
    const oneReplica = await through();
    await scaleReplicas(2);
    await waitForReadyReplicas(2);
    const twoReplicas = await through();
    const pod = JSON.parse(await kubectl(['-n', NODES_NAMESPACE, 'get', 'pod', `rln-${nodeId}-0`, '-o', 'json']));
    const direct = keepAliveGetter(`http://${pod.status.podIP}:3001`, {}, CONNECTIONS);
    const directCall = async () => {
      await direct('/nodeinfo');
    };
    await runLoad(directCall, { concurrency: CONNECTIONS, durationMs: 1_000 });
    return { oneReplica, twoReplicas, direct: await runLoad(directCall, { concurrency: CONNECTIONS, durationMs }) };
  } finally {
    await svc.teardown();
  }
}
