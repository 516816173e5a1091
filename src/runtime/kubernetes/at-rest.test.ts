// What the runtime asks of the API server at start and at rest, against a fake API server
// (node:http): its requests counted by verb (the namespace check, the four lists, the watches,
// ended by the server as a real one ends them after its request timeout), watches reopened from
// their last bookmark without a relist, caches without managedFields, and its pod log streams.
// The protocol itself is tested on the test cluster (test/kubernetes/).
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../logger.ts';
import type { ApiVerb } from './api-requests.ts';
import { CONTAINER, IMAGE_VERSION_ANNOTATION, nodeLabels, peerService, podName, restService, statefulSet } from './objects.ts';
import { PodLogCollector } from './pod-log-collector.ts';
import { WatchedObjects } from './watched-objects.ts';
import { KubernetesRuntime } from './runtime.ts';
import { readKubernetesConfig } from './settings.ts';

const NAMESPACE = 'fake';
const log = createLogger('silent');

/** What the fake API server was asked, and the requests it holds open (watches, log follows). */
class FakeApiServer {
  readonly asked: string[] = [];
  readonly open = new Set<ServerResponse>();
  private readonly server = createServer((req, res) => this.answer(req, res));
  url = '';

  async start() {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async stop() {
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    this.server.close();
  }

  /** Ends every watch as the API server does after its request timeout (a clean end, no error). */
  endWatches() {
    for (const res of this.open) if (res.req.url?.includes('watch=true')) res.end();
  }

  /** Sends a watch event on every watch open. */
  sendToWatches(type: string, object: unknown) {
    for (const res of this.open) if (res.req.url?.includes('watch=true')) res.write(`${JSON.stringify({ type, object })}\n`);
  }

  /** Sends a watch event on the watches of one kind of object (`statefulsets`, `pods`, `services`). */
  sendToWatchesOf(kind: string, type: string, object: unknown) {
    for (const res of this.open) if (res.req.url?.includes(`/${kind}?`) && res.req.url.includes('watch=true')) res.write(`${JSON.stringify({ type, object })}\n`);
  }

  /** Cuts every pod log stream mid-way, as an API server restarting does. */
  cutLogs() {
    for (const res of this.open) if (res.req.url?.includes('/log?')) res.socket?.destroy();
  }

  private answer(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url!, 'http://x');
    const json = (body: unknown) => res.setHeader('content-type', 'application/json').end(JSON.stringify(body));
    const holdOpen = () => {
      this.open.add(res);
      res.on('close', () => this.open.delete(res));
      res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
    };
    this.asked.push(`${req.method} ${url.pathname}${url.searchParams.has('watch') ? ` watch ${url.searchParams}` : ''}`);
    if (url.pathname.endsWith('/log')) {
      holdOpen();
      return res.write('2026-11-26T04:00:00.000000001Z one line\n');
    }
    if (url.searchParams.get('watch') === 'true') return holdOpen();
    // The client's discovery of a kind's resource (not a counted request: once per kind per process).
    if (url.pathname === '/api/v1') return json({ kind: 'APIResourceList', groupVersion: 'v1', resources: [{ name: 'namespaces', kind: 'Namespace', namespaced: false, verbs: [] }] });
    if (url.pathname === `/api/v1/namespaces/${NAMESPACE}`) return json({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    if (/\/(pods|services|statefulsets|persistentvolumeclaims)$/.test(url.pathname)) return json({ kind: 'List', items: [], metadata: { resourceVersion: '7' } });
    res.writeHead(404).end();
  }
}

const fakeKubeConfig = (server: string) => {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'fake', server, skipTLSVerify: true }],
    users: [{ name: 'fake', token: 'fake' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
    currentContext: 'fake',
  });
  return kc;
};

async function eventually(check: () => void, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** Counts by verb, as the service's metric would. */
function recorder() {
  const requests: Partial<Record<ApiVerb, number>> = {};
  let streams = 0;
  return {
    requests,
    streams: () => streams,
    kubernetesApiRequested: (verb: ApiVerb) => void (requests[verb] = (requests[verb] ?? 0) + 1),
    nodeLogStreamsChanged: (delta: 1 | -1) => void (streams += delta),
  };
}

describe('the kubernetes runtime against a fake API server', () => {
  const api = new FakeApiServer();
  let dir: string;
  beforeAll(async () => {
    await api.start();
    dir = mkdtempSync(join(tmpdir(), 'rln-fake-api-'));
  });
  afterAll(async () => {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts its start (namespace check, four lists, four watches: claims too), then at rest only watches reopened, never a list', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    const kc = fakeKubeConfig(api.url);
    writeFileSync(kubeconfig, kc.exportConfig());
    const metrics = recorder();
    const config = readKubernetesConfig({ KUBECONFIG: kubeconfig, K8S_NAMESPACE: NAMESPACE }, []);
    const runtime = await KubernetesRuntime.start({ config, takenPorts: async () => new Set<number>(), defaultPeerHost: '127.0.0.1', log, metrics });
    try {
      expect(runtime.isReady()).toBe(true);
      await eventually(() => expect(metrics.requests).toEqual({ get: 1, list: 4, watch: 4 }));
      // The API server ends a watch after its request timeout: it is reopened from where it was.
      api.endWatches();
      await eventually(() => expect(metrics.requests).toEqual({ get: 1, list: 4, watch: 8 }));
      // Counted as sent: the fake server may see the last ones a moment later.
      await eventually(() => expect(api.asked.filter((a) => a.includes(' watch '))).toHaveLength(8));
    } finally {
      await runtime.shutdown();
    }
  });

  it('keeps objects without managedFields, and reopens an ended watch from its last bookmark, without a relist', async () => {
    const managedFields = [{ manager: 'rln-cloud', operation: 'Apply', fieldsV1: { 'f:spec': {} } }];
    const metrics = recorder();
    const namespace = 'cache'; // its own: the watches of the test above are on the fake API server too
    const path = `/apis/apps/v1/namespaces/${namespace}/statefulsets`;
    const watched = new WatchedObjects({
      kc: fakeKubeConfig(api.url),
      namespace,
      path,
      labelSelector: 'a=b',
      list: async () => ({ items: [{ metadata: { name: 'listed', namespace, resourceVersion: '5', managedFields } }], metadata: { resourceVersion: '7' } }),
      onChange: () => {},
      count: metrics.kubernetesApiRequested,
      log,
    });
    await watched.start();
    try {
      const watches = () => api.asked.filter((a) => a.startsWith(`GET ${path} watch `));
      await eventually(() => expect(watches()).toHaveLength(1));
      expect(watches()[0]).toContain('allowWatchBookmarks=true');
      expect(watches()[0]).toContain('resourceVersion=7');
      api.sendToWatches('ADDED', { metadata: { name: 'watched', namespace, resourceVersion: '8', managedFields } });
      await eventually(() => expect(watched.get('watched')).toBeDefined());
      expect(watched.get('listed')!.metadata).not.toHaveProperty('managedFields');
      expect(watched.get('watched')!.metadata).not.toHaveProperty('managedFields');
      // Nothing changed for a while: the API server's bookmark carries the current resourceVersion.
      // Then the server ends the watch: on one connection, the bookmark arrives first.
      api.sendToWatches('BOOKMARK', { metadata: { resourceVersion: '42' } });
      api.endWatches();
      await eventually(() => expect(watches()).toHaveLength(2));
      expect(watches()[1]).toContain('resourceVersion=42');
      expect(metrics.requests).toEqual({ list: 1, watch: 2 });
    } finally {
      watched.stop();
    }
  });

  it('tells which daemons run from its caches: a set that wants a pod, the pod ready, both Services', async () => {
    const kubeconfig = join(dir, 'kubeconfig-daemons');
    writeFileSync(kubeconfig, fakeKubeConfig(api.url).exportConfig());
    const config = readKubernetesConfig({ KUBECONFIG: kubeconfig, K8S_NAMESPACE: NAMESPACE }, []);
    const runtime = await KubernetesRuntime.start({ config, takenPorts: async () => new Set<number>(), defaultPeerHost: '127.0.0.1', log, metrics: recorder() });
    try {
      await eventually(() => expect(api.asked.filter((a) => a.includes(`/namespaces/${NAMESPACE}/pods watch `)).length).toBeGreaterThan(0));
      let version = 100;
      const add = (kind: string, object: { metadata: Record<string, unknown>; status?: unknown }) =>
        api.sendToWatchesOf(kind, 'ADDED', { ...object, metadata: { ...object.metadata, resourceVersion: String(++version) } });
      const input = (nodeId: string, replicas: 0 | 1) => ({ nodeId, network: 'regtest' as const, imageVersion: 'v1', replicas });
      // n-up runs; n-stopped's set wants no pod; n-starting's pod is not there yet.
      add('statefulsets', statefulSet(config, input('n-up', 1)));
      add('statefulsets', statefulSet(config, input('n-stopped', 0)));
      add('statefulsets', statefulSet(config, input('n-starting', 1)));
      for (const nodeId of ['n-up', 'n-stopped', 'n-starting']) {
        add('services', restService(config, nodeId));
        add('services', peerService(config, nodeId));
      }
      add('pods', {
        metadata: { name: podName('n-up'), namespace: NAMESPACE, labels: nodeLabels('n-up'), annotations: { [IMAGE_VERSION_ANNOTATION]: 'v1' } },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      });
      await eventually(() => expect(runtime.runningDaemons()).toEqual(['n-up']));
    } finally {
      await runtime.shutdown();
    }
  });

  it('says a node is on its way (starting) while Kubernetes brings its pod back itself, stopped where a repair must act', async () => {
    const kubeconfig = join(dir, 'kubeconfig-starting');
    writeFileSync(kubeconfig, fakeKubeConfig(api.url).exportConfig());
    const config = readKubernetesConfig({ KUBECONFIG: kubeconfig, K8S_NAMESPACE: NAMESPACE }, []);
    const runtime = await KubernetesRuntime.start({ config, takenPorts: async () => new Set<number>(), defaultPeerHost: '127.0.0.1', log, metrics: recorder() });
    try {
      await eventually(() => expect(api.asked.filter((a) => a.includes(`/namespaces/${NAMESPACE}/pods watch `)).length).toBeGreaterThan(1));
      let version = 1000;
      const add = (kind: string, object: { metadata: Record<string, unknown>; status?: unknown; spec?: unknown }) =>
        api.sendToWatchesOf(kind, 'ADDED', { ...object, metadata: { ...object.metadata, resourceVersion: String(++version) } });
      const pod = (nodeId: string, imageVersion: string, extra: { metadata?: Record<string, unknown>; status?: unknown } = {}) =>
        add('pods', {
          metadata: { name: podName(nodeId), namespace: NAMESPACE, uid: `uid-${nodeId}`, labels: nodeLabels(nodeId), annotations: { [IMAGE_VERSION_ANNOTATION]: imageVersion }, ...extra.metadata },
          status: extra.status ?? { phase: 'Pending' },
        });
      const waiting = (reason: string) => ({ phase: 'Pending', containerStatuses: [{ name: CONTAINER, state: { waiting: { reason } }, restartCount: 0, image: '', imageID: '', ready: false }] });
      const nodes = ['s-created', 's-terminating', 's-pulling', 's-unpullable', 's-stale', 's-set-deleted'];
      for (const nodeId of nodes) {
        const set = statefulSet(config, { nodeId, network: 'regtest', imageVersion: 'v1', replicas: 1 });
        add('statefulsets', nodeId === 's-set-deleted' ? { ...set, metadata: { ...set.metadata, deletionTimestamp: '2026-11-27T00:00:00Z' } } : set);
        add('services', restService(config, nodeId));
        add('services', peerService(config, nodeId));
      }
      // s-created: the controller has not created its pod yet.
      pod('s-terminating', 'v1', { metadata: { deletionTimestamp: '2026-11-27T00:00:30Z', deletionGracePeriodSeconds: 30 }, status: { phase: 'Running' } });
      pod('s-pulling', 'v1', { status: waiting('ContainerCreating') });
      pod('s-unpullable', 'v1', { status: waiting('ImagePullBackOff') });
      pod('s-stale', 'v0', { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } });
      pod('s-set-deleted', 'v1');
      const states = async () => Object.fromEntries(await Promise.all(nodes.map(async (n) => [n, await runtime.status(n)])));
      const expected = {
        's-created': { state: 'starting', imageVersion: 'v1' },
        's-terminating': { state: 'starting', imageVersion: 'v1' },
        's-pulling': { state: 'starting', imageVersion: 'v1' },
        // What only a repair or a person can change: left to the loop (and its backoff).
        's-unpullable': { state: 'stopped' },
        's-stale': { state: 'stopped' },
        's-set-deleted': { state: 'stopped' },
      };
      // The pods arrive in the order sent, on one watch: once s-unpullable's is in, the ones before are.
      for (const deadline = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 20))) {
        const seen = await states();
        if (JSON.stringify(seen) === JSON.stringify(expected) || Date.now() > deadline) {
          expect(seen).toEqual(expected);
          break;
        }
      }
      // Not running, for everything that asks whether a daemon answers (the gateways, the builds).
      expect(nodes.filter((n) => runtime.runsDaemon(n))).toEqual([]);
      expect(runtime.runningDaemons().filter((n) => n.startsWith('s-'))).toEqual([]);
    } finally {
      await runtime.shutdown();
    }
  });

  describe('a pod log followed', () => {
    const pod: V1Pod = {
      metadata: { name: 'rln-n1-0', uid: 'u1' },
      status: { containerStatuses: [{ name: CONTAINER, state: { running: {} }, restartCount: 0, image: '', imageID: '', ready: true }] },
    };
    let collector: PodLogCollector;
    let metrics: ReturnType<typeof recorder>;
    const lines: string[] = [];
    afterEach(() => collector?.stop());

    const follow = () => {
      metrics = recorder();
      collector = new PodLogCollector({
        kc: fakeKubeConfig(api.url),
        namespace: NAMESPACE,
        log,
        currentPod: () => pod,
        count: metrics.kubernetesApiRequested,
        onStreams: metrics.nodeLogStreamsChanged,
      });
      collector.follow('n1', null, (line) => lines.push(line.text));
    };

    it('is one request and one stream open, closed again when unfollowed', async () => {
      follow();
      await eventually(() => expect([collector.openStreams(), metrics.streams()]).toEqual([1, 1]));
      expect(metrics.requests).toEqual({ get: 1 });
      collector.unfollow('n1');
      await eventually(() => expect([collector.openStreams(), metrics.streams()]).toEqual([0, 0]));
      await eventually(() => expect(api.open.size).toBe(0));
    });

    it('is opened again after the API server cut it', async () => {
      follow();
      await eventually(() => expect(collector.openStreams()).toBe(1));
      api.cutLogs();
      await eventually(() => expect(metrics.requests).toEqual({ get: 2 }));
      await eventually(() => expect([collector.openStreams(), metrics.streams()]).toEqual([1, 1]));
    });
  });
});
