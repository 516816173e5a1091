// The kubernetes runtime on the project's test cluster (TEST_KUBECONFIG, from
// scripts/test-cluster.sh up), beside the process runtime in the same run: create-to-RUNNING,
// stop, start, upgrade and destroy times through the public API, the Kubernetes API requests each
// operation makes, and the service's memory with 500 nodes' StatefulSets in its watch cache.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startServer, type RunningServer } from '../src/app.ts';
import { freePort, randomNodePortRange } from '../test/helpers/ports.ts';
import { apiCaller } from '../test/helpers/server.ts';
import { readKubernetesConfig } from '../src/runtime/kubernetes/settings.ts';
import { statefulSet } from '../src/runtime/kubernetes/objects.ts';
import { prepareDataDir, timeToHealthy } from './startup.ts';

export const LIFECYCLE_STEPS = ['create', 'stop', 'start', 'upgrade', 'destroy'] as const;
type Step = (typeof LIFECYCLE_STEPS)[number];

export interface LifecycleFigures {
  seconds: Record<Step, number[]>;
  apiRequests: Record<Step, number> | undefined;
}

const kubectl = (kubeconfig: string, args: string[], input?: string) =>
  execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { input, maxBuffer: 256 * 2 ** 20 }).toString();

/** One node's life, `rounds` times, on one runtime; the median of each step is what is reported. */
export async function benchLifecycle(runtime: 'process' | 'kubernetes', kubeconfig: string, rounds: number): Promise<LifecycleFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-k8s-'));
  const namespace = `rln-bench-${randomBytes(3).toString('hex')}`;
  const env: Record<string, string> = runtime === 'kubernetes' ? { RUNTIME: 'kubernetes', KUBECONFIG: kubeconfig, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '16Mi' } : {};
  const config = loadConfig({
    DATA_DIR: dataDir,
    API_PORT: String(await freePort()),
    NODE_API_PORT: String(await freePort()),
    MTLS_PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    NODE_PORT_RANGE: randomNodePortRange(),
    BOOTSTRAP_DEV_USER: 'false',
    JOB_POLL_INTERVAL_MS: '100',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const server = await startServer(config, createLogger('silent'));
  const seconds = Object.fromEntries(LIFECYCLE_STEPS.map((s) => [s, [] as number[]])) as LifecycleFigures['seconds'];
  const requests = Object.fromEntries(LIFECYCLE_STEPS.map((s) => [s, 0])) as Record<Step, number>;
  try {
    const user = await server.services.accounts.createUser({ email: 'bench@example.com', plan: 'starter' });
    const { token } = await server.services.accounts.createToken('bench@example.com');
    const call = apiCaller(config.publicUrl);
    const apiRequests = () => (server.runtime as { apiRequests?: number }).apiRequests ?? 0;
    for (let round = 0; round < rounds; round++) {
      // The test cluster has two devnode images: the first round upgrades to the second, and later
      // rounds are created on it, so the upgrade is measured once.
      const version = 'devnode-0.2.0';
      let nodeId = '';
      const step = async (name: Step, act: () => Promise<void>, settled: (n: any) => boolean) => {
        const before = apiRequests();
        const started = performance.now();
        await act();
        for (;;) {
          const n = (await call(`/api/nodes/${nodeId}`, { token })).json?.data;
          if (n && settled(n)) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        seconds[name].push((performance.now() - started) / 1000);
        requests[name] = apiRequests() - before;
      };
      await step('create', async () => {
        nodeId = (await call('/api/nodes', { method: 'POST', token, body: { name: `b${round}`, network: 'regtest' } })).json.data.nodeId;
      }, (n) => n.status === 'RUNNING');
      await step('stop', async () => void (await call(`/api/nodes/${nodeId}/stop`, { method: 'POST', token })), (n) => n.status === 'PAUSED');
      await step('start', async () => void (await call(`/api/nodes/${nodeId}/start`, { method: 'POST', token })), (n) => n.status === 'RUNNING');
      if (round === 0) {
        await step('upgrade', async () => {
          await server.services.releases.publish(version);
          await call(`/api/nodes/${nodeId}/upgrade`, { method: 'POST', token });
        }, (n) => n.status === 'RUNNING' && n.rln_commit_id === version);
      }
      await step('destroy', async () => void (await call('/api/nodes', { method: 'DELETE', token, body: { destroyNodeId: nodeId } })), (n) => n.status === 'DESTROYED');
    }
    return { seconds, apiRequests: runtime === 'kubernetes' ? requests : undefined };
  } finally {
    await stopQuietly(server);
    rmSync(dataDir, { recursive: true, force: true });
    if (runtime === 'kubernetes') kubectl(kubeconfig, ['delete', 'namespace', namespace, '--wait=false', '--ignore-not-found']);
  }
}

async function stopQuietly(server: RunningServer) {
  try {
    await server.stop();
  } catch {}
}

/**
 * RSS of the idle service (npm start) watching a namespace with `count` StatefulSets at zero
 * replicas (and no pods: the cheapest objects that still fill the cache), beside an empty one.
 */
export async function benchWatchMemory(kubeconfig: string, count: number) {
  const namespace = `rln-bench-mem-${randomBytes(3).toString('hex')}`;
  const empty = `${namespace}-empty`;
  kubectl(kubeconfig, ['create', 'namespace', namespace]);
  kubectl(kubeconfig, ['create', 'namespace', empty]);
  const config = readKubernetesConfig({ K8S_NAMESPACE: namespace }, []);
  const items = Array.from({ length: count }, () =>
    statefulSet(config, { nodeId: randomBytes(16).toString('hex'), network: 'regtest', imageVersion: 'devnode-0.1.0', replicas: 0 }),
  );
  for (let i = 0; i < items.length; i += 100) {
    kubectl(kubeconfig, ['apply', '--server-side', '--field-manager', 'rln-cloud', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: items.slice(i, i + 100) }));
  }
  const dataDir = await prepareDataDir(0);
  try {
    const rssIn = async (ns: string) => {
      const port = await freePort();
      const env: NodeJS.ProcessEnv = {
        ...process.env, DATA_DIR: dataDir, API_PORT: String(port), NODE_API_PORT: String(await freePort()), MTLS_PORT: String(await freePort()), METRICS_PORT: String(await freePort()),
        LOG_LEVEL: 'warn', RUNTIME: 'kubernetes', KUBECONFIG: kubeconfig, K8S_NAMESPACE: ns,
      };
      delete env.DATABASE_URL;
      // Ten seconds idle: the watches have listed everything and start-up garbage is collected.
      return (await timeToHealthy('npm', ['start'], env, `http://127.0.0.1:${port}/healthz`, 10_000)).rssMb;
    };
    return { withObjects: await rssIn(namespace), empty: await rssIn(empty) };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    kubectl(kubeconfig, ['delete', 'namespace', namespace, empty, '--wait=false']);
  }
}
