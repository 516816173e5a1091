// The `kubernetes` runtime: each node is a StatefulSet of one replica with its storage on a volume
// claim, a Service for its REST port (what the gateways reach) and one for its Lightning peer port
// (see objects.ts). Writes are server-side applies; everything read (status, endpoints, readiness,
// restarts) comes from watches of the namespace (watched-objects.ts), so a gateway call never
// costs an API request and the answers stay available while the API server is away.
import type { V1PersistentVolumeClaim, V1Pod, V1Service, V1StatefulSet } from '@kubernetes/client-node';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from '../../logger.ts';
import type { NodeEndpoint, NodePorts, NodeRootKeys, NodeRuntime, NodeSpec, NodeStorageFiles, NodeVssUrls, PeerAddress, RuntimeStatus, TakenPorts } from '../types.ts';
import type { RuntimeLogs } from '../../logs/runtime-logs.ts';
import type { KubernetesConfig } from './settings.ts';
import { Cluster, loadKubeConfig } from './cluster.ts';
import {
  claimName,
  CONTAINER,
  IMAGE_VERSION_ANNOTATION,
  imageFor,
  MANAGED_SELECTOR,
  NODE_ID_LABEL,
  PEER_PORT,
  peerService,
  peerServiceName,
  podName,
  REST_PORT,
  restService,
  statefulSet,
  vssSecretName,
  vssUrlSecret,
  workloadName,
} from './objects.ts';
import { WatchedObjects, type ChangeKind } from './watched-objects.ts';
import { PodLogCollector } from './pod-log-collector.ts';
import { PodStorageFiles } from './pod-storage-files.ts';
import type { ApiVerb, KubernetesMetrics } from './api-requests.ts';
import { CountedExec } from './counted-clients.ts';
import { podProblem } from './pod-problems.ts';
import { claimLoss } from './claim-state.ts';

export interface KubernetesRuntimeOptions<Within = unknown> {
  config: KubernetesConfig;
  /** The peer ports other nodes hold, asked with K8S_PEER_SERVICE_TYPE=HostPort only (NodeRuntime.assignPorts). */
  takenPorts: TakenPorts<Within>;
  /** The peer address when K8S_PEER_HOST is unset and no load balancer gave one. */
  defaultPeerHost: string;
  /** Told of every API request and of the pod log streams held open (metrics/); absent: nobody counts. */
  metrics?: KubernetesMetrics;
  log: Logger;
  /** The VSS URLs of nodes with continuous state (VSS_NODE_URL); absent: such nodes start without --vss-url. */
  vssUrls?: NodeVssUrls;
  /** Each node's Biscuit root key (issue #40); absent (tests of the runtime alone): no node has one. */
  rootKeys?: NodeRootKeys;
}

/** How long a stopped or destroyed node's objects may take to go away (30 s grace, then some). */
const GONE_TIMEOUT_MS = 90_000;
/** How long a pod whose containers have ended may stay in deletion before it is removed at once. */
const STUCK_DELETION_MS = 5_000;

export class KubernetesRuntime<Within = unknown> implements NodeRuntime<Within> {
  readonly reportsEveryRestart = true;
  /** Files in a node's volume, reached through exec in its running pod (pod-storage-files.ts). */
  readonly storageFiles: NodeStorageFiles;
  private readonly cluster: Cluster;
  private readonly pods: WatchedObjects<V1Pod>;
  private readonly sets: WatchedObjects<V1StatefulSet>;
  private readonly services: WatchedObjects<V1Service>;
  /** The nodes' volume claims: whether a node's volume is gone (storagePresent) costs no request. */
  private readonly claims: WatchedObjects<V1PersistentVolumeClaim>;
  /** Follows the pod logs of the nodes whose log claim this replica holds (logs/node-log-collection.ts). */
  private readonly logFollower: PodLogCollector;
  /** A pod's log is gone with the pod: followed, to be stored where every replica reads it. */
  readonly logs: RuntimeLogs;
  private readonly core: CoreV1Api;
  private readonly count: (verb: ApiVerb) => void;
  private readonly exitListeners: Array<(nodeId: string, detail: string) => void> = [];
  /** Pods the runtime itself is replacing or removing (by uid): their end is not an unexpected exit. */
  private readonly expectedGone = new Set<string>();
  private readonly restartCounts = new Map<string, number>();
  /** Pods already removed at once (by uid), so a stuck deletion is nudged only once. */
  private readonly forceDeleted = new Set<string>();
  /** Pods whose deletion by someone else was already reported (when it began). */
  private readonly reportedDeleting = new Set<string>();
  /** Resolved on every watched change: what awaitRunning and the waits for deletion wake on. */
  private changed: Array<() => void> = [];

  static async start<Within>(opts: KubernetesRuntimeOptions<Within>): Promise<KubernetesRuntime<Within>> {
    const runtime = new KubernetesRuntime(opts);
    await runtime.begin();
    return runtime;
  }

  private constructor(private readonly opts: KubernetesRuntimeOptions<Within>) {
    const kc = loadKubeConfig(opts.config.kubeconfig);
    const metrics = opts.metrics;
    const count = (verb: ApiVerb) => metrics?.kubernetesApiRequested(verb);
    this.count = count;
    this.cluster = new Cluster(kc, count);
    const namespace = opts.config.namespace;
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    const log = opts.log;
    const labelSelector = MANAGED_SELECTOR;
    this.pods = new WatchedObjects<V1Pod>({
      kc, namespace, log, labelSelector, count,
      path: `/api/v1/namespaces/${namespace}/pods`,
      list: () => core.listNamespacedPod({ namespace, labelSelector }),
      onChange: (kind, pod) => this.podChanged(kind, pod),
    });
    this.sets = new WatchedObjects<V1StatefulSet>({
      kc, namespace, log, labelSelector, count,
      path: `/apis/apps/v1/namespaces/${namespace}/statefulsets`,
      list: () => apps.listNamespacedStatefulSet({ namespace, labelSelector }),
      onChange: () => this.wakeWaiters(),
    });
    this.services = new WatchedObjects<V1Service>({
      kc, namespace, log, labelSelector, count,
      path: `/api/v1/namespaces/${namespace}/services`,
      list: () => core.listNamespacedService({ namespace, labelSelector }),
      onChange: () => this.wakeWaiters(),
    });
    this.claims = new WatchedObjects<V1PersistentVolumeClaim>({
      kc, namespace, log, labelSelector, count,
      path: `/api/v1/namespaces/${namespace}/persistentvolumeclaims`,
      list: () => core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector }),
      onChange: () => this.wakeWaiters(),
    });
    this.core = core;
    const currentPod = (nodeId: string) => this.pods.get(podName(nodeId));
    const onStreams = (delta: 1 | -1) => metrics?.nodeLogStreamsChanged(delta);
    this.logFollower = new PodLogCollector({ kc, namespace, log, currentPod, count, onStreams });
    this.logs = { kind: 'followed', follower: this.logFollower };
    this.storageFiles = new PodStorageFiles({ exec: new CountedExec(kc, count), namespace, currentPod });
  }

  /**
   * Creates the namespace if needed and starts the watches. An API server that is away does not
   * stop the service: the watches keep retrying, builds fail with the reason, isReady() says so.
   */
  private async begin() {
    try {
      await this.cluster.ensureNamespace(this.opts.config.namespace);
    } catch (err) {
      this.opts.log.warn({ err: (err as Error).message }, 'could not check the nodes namespace; continuing');
    }
    const started = performance.now();
    // The claims' watch is not part of isReady(): a role without list and watch on claims only
    // leaves lost volumes to the health probe (nodes/health/storage-lost.ts), it stops nothing else.
    await Promise.all([this.sets.start(), this.services.start(), this.pods.start(), this.claims.start()]);
    if (!this.isReady()) this.opts.log.warn('the Kubernetes watches are not synced yet; retrying in the background');
    // How long the lists take grows with the fleet, and each relist (a watch reopened too late,
    // 410 Gone) costs as much: said once here (npm run bench -- scale reads it).
    else this.opts.log.info({ seconds: (performance.now() - started) / 1000, statefulSets: this.sets.list().length, pods: this.pods.list().length, services: this.services.list().length }, 'Kubernetes watch caches filled');
  }

  /** API requests made so far (see Cluster.requests). */
  get apiRequests() {
    return this.cluster.requests;
  }

  isReady() {
    return this.sets.synced && this.services.synced && this.pods.synced;
  }

  /**
   * Every pod has its own address and the daemon listens on fixed ports: nothing to hand out, but
   * with HostPort the peer port each node gets on its machine, unique in the cluster (so a pod
   * rescheduled to another machine never collides there), from the ports no node holds.
   */
  async assignPorts(within: Within): Promise<NodePorts | undefined> {
    const { peerServiceType, peerPortRange: range } = this.opts.config;
    if (peerServiceType !== 'HostPort') return { restPort: null, peerPort: null };
    const held = await this.opts.takenPorts(within);
    for (let port = range.from; port <= range.to; port++) if (!held.has(port)) return { restPort: null, peerPort: port };
    return undefined;
  }

  async provision(_spec: NodeSpec) {
    // The node's volume is the StatefulSet's claim: created with the pod, kept until destroy().
  }

  async start(spec: NodeSpec) {
    // No pod of the node at all (a StatefulSet makes the next only once the last is gone): a fence
    // its last daemon left without a clean stop is released. A container the kubelet restarted
    // inside its pod is seen by the pod watch instead (releaseFenceOfRestartedContainer).
    if (spec.continuousState && this.opts.vssUrls && !this.pods.get(podName(spec.nodeId))) await this.opts.vssUrls.releaseFence(spec.nodeId);
    await this.applyAll(spec, 1);
    await this.replacePodIfStale(spec);
  }

  async stop(nodeId: string) {
    const existing = this.sets.get(workloadName(nodeId));
    if (!existing) return;
    this.expectPodGone(nodeId);
    // Only the StatefulSet changes: its Services (and the peer's node port) stay as they are.
    const imageVersion = existing.metadata?.annotations?.[IMAGE_VERSION_ANNOTATION] ?? '';
    await this.cluster.apply(
      statefulSet(this.opts.config, { nodeId, network: networkOf(existing), imageVersion, replicas: 0, hostPort: hostPortOf(existing), rootPublicKey: rootPublicKeyOf(existing) }),
    );
    await this.until(() => this.podGone(nodeId), GONE_TIMEOUT_MS, `the pod of node ${nodeId} to stop`);
  }

  async replaceImage(spec: NodeSpec) {
    await this.start(spec);
  }

  async destroy(nodeId: string) {
    this.expectPodGone(nodeId);
    const { namespace } = this.opts.config;
    const meta = (name: string) => ({ name, namespace });
    await this.cluster.delete({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta(workloadName(nodeId)) });
    await this.cluster.delete({ apiVersion: 'v1', kind: 'Service', metadata: meta(workloadName(nodeId)) });
    await this.cluster.delete({ apiVersion: 'v1', kind: 'Service', metadata: meta(peerServiceName(nodeId)) });
    await this.cluster.delete({ apiVersion: 'v1', kind: 'Secret', metadata: meta(vssSecretName(nodeId)) });
    await this.until(() => this.podGone(nodeId), GONE_TIMEOUT_MS, `the pod of node ${nodeId} to go`);
    // The claim outlives its StatefulSet by design; it is deleted once no pod uses it.
    const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta(claimName(nodeId)) };
    await this.cluster.delete(claim);
    await this.pollUntil(async () => !(await this.cluster.exists(claim)), GONE_TIMEOUT_MS, `the volume of node ${nodeId} to go`);
    const gone = () => !this.sets.get(workloadName(nodeId)) && !this.serviceOf(nodeId) && !this.peerServiceOf(nodeId);
    await this.until(gone, GONE_TIMEOUT_MS, `the objects of node ${nodeId} to go`);
    this.logFollower.unfollow(nodeId);
  }

  /**
   * From the claims' watch cache; a cache not synced yet says nothing is lost (a missing answer is
   * not a missing volume). The claim is the StatefulSet's, named after its pod.
   */
  async storagePresent(nodeId: string) {
    if (!this.claims.synced) return true;
    const pod = this.pods.get(podName(nodeId));
    return claimLoss(this.claims.get(claimName(nodeId)), pod !== undefined && !pod.metadata?.deletionTimestamp) === undefined;
  }

  /**
   * The pod goes first (stop waits until it is gone), then the claim, waited for until the API server
   * no longer has it: only then can the next start() make the StatefulSet create a new, empty one.
   */
  async replaceStorage(spec: NodeSpec) {
    await this.stop(spec.nodeId);
    const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claimName(spec.nodeId), namespace: this.opts.config.namespace } };
    await this.cluster.delete(claim);
    await this.pollUntil(async () => !(await this.cluster.exists(claim)), GONE_TIMEOUT_MS, `the old volume of node ${spec.nodeId} to go`);
  }

  async status(nodeId: string): Promise<RuntimeStatus> {
    return this.currentStatus(nodeId);
  }

  runsDaemon(nodeId: string): boolean {
    return this.currentStatus(nodeId).state === 'running';
  }

  runningDaemons(): string[] {
    const nodeIds = this.sets.list().map((set) => set.metadata?.labels?.[NODE_ID_LABEL]);
    return nodeIds.filter((nodeId): nodeId is string => nodeId !== undefined && this.runsDaemon(nodeId));
  }

  /**
   * `running` only when everything the node needs is there: its StatefulSet wants a pod, the pod is
   * ready on the image the StatefulSet names, and both Services exist. Anything less is a
   * difference the reconcile loop repairs by applying the objects again.
   */
  private currentStatus(nodeId: string): RuntimeStatus {
    const set = this.sets.get(workloadName(nodeId));
    if (!set) return { state: 'missing' };
    if (set.spec?.replicas === 0) return { state: 'stopped' };
    const pod = this.pods.get(podName(nodeId));
    const version = set.metadata?.annotations?.[IMAGE_VERSION_ANNOTATION];
    // An image edited by hand is drift too: the next apply takes the field back.
    const image = set.spec?.template.spec?.containers.find((c) => c.name === CONTAINER)?.image;
    const objectsCurrent =
      !set.metadata?.deletionTimestamp &&
      image === imageFor(this.opts.config, version ?? '') &&
      this.serviceOf(nodeId) !== undefined &&
      (this.opts.config.peerServiceType === 'HostPort' || this.peerServiceOf(nodeId) !== undefined);
    if (!objectsCurrent) return { state: 'stopped' };
    const podCurrent = pod !== undefined && !pod.metadata?.deletionTimestamp && pod.metadata?.annotations?.[IMAGE_VERSION_ANNOTATION] === version;
    if (podCurrent && isReady(pod)) return { state: 'running', imageVersion: version };
    return onItsWay(pod, version) ? { state: 'starting', imageVersion: version } : { state: 'stopped' };
  }

  /**
   * The ready pod's own address, which is the REST Service's one endpoint, as ingress controllers
   * reach their backends: no kube-proxy hop per request, and no window after the Service is
   * recreated (a new ClusterIP) in which kube-proxy has no rule for it yet and a connection goes
   * astray. Without a ready pod, the Service's ClusterIP, then its DNS name (inside a cluster).
   */
  endpoint(spec: NodeSpec): NodeEndpoint {
    const pod = this.pods.get(podName(spec.nodeId));
    if (pod?.status?.podIP && isReady(pod) && !pod.metadata?.deletionTimestamp) return { host: pod.status.podIP, port: REST_PORT };
    const ip = this.serviceOf(spec.nodeId)?.spec?.clusterIP;
    const host = ip && ip !== 'None' ? ip : `${workloadName(spec.nodeId)}.${this.opts.config.namespace}.svc`;
    return { host, port: REST_PORT };
  }

  /**
   * What the node's peer Service (or, with HostPort, its StatefulSet and pod) says. Asked once the
   * pod is ready, when the watches have seen them; until they have, K8S_PEER_HOST (or the service's
   * public host) and the port the node holds now.
   */
  peerAddress(spec: NodeSpec): PeerAddress {
    const nodeId = spec.nodeId;
    const fixedHost = this.opts.config.peerHost ?? this.opts.defaultPeerHost;
    const unknown = { host: this.opts.config.peerHost ?? null, port: spec.peerPort };
    if (this.opts.config.peerServiceType === 'HostPort') {
      // The machine the pod runs on; it changes when the pod is rescheduled elsewhere.
      const port = hostPortOf(this.sets.get(workloadName(nodeId)));
      const host = this.opts.config.peerHost ?? this.pods.get(podName(nodeId))?.status?.hostIP;
      return port && host ? { host, port } : unknown;
    }
    const service = this.peerServiceOf(nodeId);
    if (!service) return unknown;
    if (this.opts.config.peerServiceType === 'NodePort') {
      const port = service.spec?.ports?.[0]?.nodePort;
      return port ? { host: fixedHost, port } : unknown;
    }
    const ingress = service.status?.loadBalancer?.ingress?.[0];
    return { host: this.opts.config.peerHost ?? ingress?.hostname ?? ingress?.ip ?? fixedHost, port: PEER_PORT };
  }

  async awaitRunning(spec: NodeSpec, timeoutMs: number) {
    let problem: string | undefined;
    await this.until(
      () => {
        const pod = this.pods.get(podName(spec.nodeId));
        const current = pod && pod.metadata?.annotations?.[IMAGE_VERSION_ANNOTATION] === spec.imageVersion && !pod.metadata?.deletionTimestamp;
        if (!current) {
          this.podGone(spec.nodeId); // the pod being replaced must go before its successor starts
          return false;
        }
        if (isReady(pod)) return true;
        const found = podProblem(pod);
        if (found?.fatal) throw new Error(found.reason);
        problem = found?.reason ?? problem;
        return false;
      },
      timeoutMs,
      `node ${spec.nodeId}'s pod to become ready on ${spec.imageVersion}`,
      () => problem,
    );
  }

  /**
   * The pod log's last bytes, asked of the API server (one request; a failed build quotes them):
   * the collected output is with whichever replica follows the node. The current container's,
   * or the previous one's when the current one has not printed anything yet (it crashed at start).
   */
  async tailLog(nodeId: string, maxBytes = 2048) {
    const ask = (previous: boolean) => {
      this.count('get');
      return this.core
        .readNamespacedPodLog({ name: podName(nodeId), namespace: this.opts.config.namespace, container: CONTAINER, previous, limitBytes: maxBytes * 4, tailLines: 200 })
        .then((text) => String(text ?? '').slice(-maxBytes))
        .catch(() => '');
    };
    return (await ask(false)) || ask(true);
  }

  onUnexpectedExit(listener: (nodeId: string, detail: string) => void) {
    this.exitListeners.push(listener);
  }

  async shutdown() {
    this.logFollower.stop();
    for (const watched of [this.pods, this.sets, this.services, this.claims]) watched.stop();
    this.wakeWaiters();
  }

  private serviceOf = (nodeId: string) => this.services.get(workloadName(nodeId));
  private peerServiceOf = (nodeId: string) => this.services.get(peerServiceName(nodeId));

  private async applyAll(spec: NodeSpec, replicas: 0 | 1) {
    const { config } = this.opts;
    await this.cluster.apply(restService(config, spec.nodeId));
    // HostPort: the pod binds its peer port on its machine, and no Service is needed.
    if (config.peerServiceType !== 'HostPort') await this.cluster.apply(peerService(config, spec.nodeId, spec.peerPort));
    const vssUrl = replicas === 1 && spec.continuousState && this.opts.vssUrls ? await this.opts.vssUrls.urlFor(spec.nodeId) : undefined;
    // The Secret first: a pod whose Secret is missing waits (CreateContainerConfigError) until it is there.
    if (vssUrl !== undefined) await this.cluster.apply(vssUrlSecret(config, spec.nodeId, vssUrl));
    // Applying a new key restarts nothing (OnDelete): the pod gets it when it is next replaced.
    const rootPublicKey = (await this.opts.rootKeys?.publicKeyFor(spec.nodeId)) ?? null;
    await this.cluster.apply(statefulSet(config, { nodeId: spec.nodeId, network: spec.network, imageVersion: spec.imageVersion, replicas, hostPort: spec.peerPort, rootPublicKey, vssUrl }));
  }

  /**
   * The StatefulSet replaces pods only when told to (OnDelete): a pod running another image
   * version is deleted here so the new one starts, which is also how a rollback takes effect.
   */
  private async replacePodIfStale(spec: NodeSpec) {
    const pod = this.pods.get(podName(spec.nodeId));
    if (!pod || pod.metadata?.deletionTimestamp) return;
    const image = pod.spec?.containers.find((c) => c.name === CONTAINER)?.image;
    if (image === imageFor(this.opts.config, spec.imageVersion) && pod.metadata?.annotations?.[IMAGE_VERSION_ANNOTATION] === spec.imageVersion) return;
    this.expectPodGone(spec.nodeId);
    // A pod whose daemon never started (an image that cannot be pulled) has nothing to stop, but
    // the kubelet takes its grace period and more to let it go (~45 s seen): remove it at once.
    const neverStarted = !pod.status?.containerStatuses?.some((c) => c.state?.running || c.state?.terminated || c.lastState?.terminated);
    const stale = { apiVersion: 'v1', kind: 'Pod', metadata: { name: podName(spec.nodeId), namespace: this.opts.config.namespace } };
    await this.cluster.delete(stale, neverStarted ? 0 : undefined);
  }

  /**
   * Whether the node's pod is gone. A pod whose containers have all ended but which is still
   * there a few seconds later is removed at once: the kubelet sometimes fails to confirm a
   * container it already removed and retries much later (seen: ~50 s on Kubernetes 1.20 with
   * containerd), which would hold up a stop, an upgrade or a destroy. With its daemon ended,
   * nothing can run twice.
   */
  private podGone(nodeId: string): boolean {
    const pod = this.pods.get(podName(nodeId));
    if (!pod) return true;
    // deletionTimestamp is when the grace period ends; the deletion was asked for that much earlier.
    const graceEnds = pod.metadata?.deletionTimestamp ? new Date(pod.metadata.deletionTimestamp).getTime() : undefined;
    const askedAt = graceEnds === undefined ? undefined : graceEnds - (pod.metadata?.deletionGracePeriodSeconds ?? 0) * 1000;
    const ended = (pod.status?.containerStatuses ?? []).every((c) => !c.state?.running);
    const uid = pod.metadata?.uid ?? '';
    if (askedAt !== undefined && ended && Date.now() - askedAt > STUCK_DELETION_MS && !this.forceDeleted.has(uid)) {
      this.forceDeleted.add(uid);
      const stuck = { apiVersion: 'v1', kind: 'Pod', metadata: { name: podName(nodeId), namespace: this.opts.config.namespace } };
      this.cluster.delete(stuck, 0).catch((err) => this.opts.log.warn({ nodeId, err: (err as Error).message }, 'could not remove a stopped pod'));
    }
    return false;
  }

  private expectPodGone(nodeId: string) {
    const uid = this.pods.get(podName(nodeId))?.metadata?.uid;
    if (uid) this.expectedGone.add(uid);
  }

  private podChanged(kind: ChangeKind, pod: V1Pod) {
    const nodeId = pod.metadata?.labels?.[NODE_ID_LABEL];
    if (nodeId) {
      const uid = pod.metadata?.uid ?? '';
      const restarts = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.restartCount ?? 0;
      if (kind === 'delete') {
        this.restartCounts.delete(uid);
        this.forceDeleted.delete(uid);
        const reported = this.reportedDeleting.delete(uid);
        if (!this.expectedGone.delete(uid) && !reported) this.reportExit(nodeId, `pod ${pod.metadata?.name} was deleted`);
      } else {
        // Someone else is deleting the pod (kubectl, an eviction, a drain): its daemon is being
        // stopped now. Said at once rather than when the kubelet lets go of the pod, which can take
        // its whole grace period and more on a busy machine.
        if (pod.metadata?.deletionTimestamp && !this.expectedGone.has(uid) && !this.reportedDeleting.has(uid)) {
          this.reportedDeleting.add(uid);
          this.reportExit(nodeId, `pod ${pod.metadata.name} is being deleted`);
        }
        const before = this.restartCounts.get(uid);
        this.restartCounts.set(uid, restarts);
        if (before !== undefined && restarts > before) {
          this.releaseFenceOfRestartedContainer(nodeId, pod);
          this.reportExit(nodeId, `the daemon's container restarted (${lastExit(pod)})`);
        }
        if (pod.status?.phase === 'Failed' && kind === 'update') this.reportExit(nodeId, `pod failed: ${pod.status.reason ?? 'unknown reason'}`);
        this.logFollower.observe(nodeId, pod);
      }
    }
    this.wakeWaiters();
  }

  /**
   * The kubelet restarted the daemon's container inside its pod (a crash, an OOM kill): the daemon
   * that ended never released its VSS fence, and the new one would refuse to unlock. The pod is
   * the node's only one and its old container has ended, so no other daemon of the node runs; the
   * fence is released if it was written before the end of the second in which the old container
   * ended (Kubernetes' finishedAt is in whole seconds, rounded down; a daemon that crashed within a
   * second of its unlock wrote its fence in that second). A fence the new daemon took is later:
   * it needs the kubelet's restart, its start and an unlock first.
   */
  private releaseFenceOfRestartedContainer(nodeId: string, pod: V1Pod) {
    const finishedAt = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.lastState?.terminated?.finishedAt;
    if (!this.opts.vssUrls || !finishedAt) return;
    // A Date when the client parsed the object, text when the watch's JSON went straight through.
    const ended = new Date(finishedAt as Date | string).getTime();
    if (Number.isNaN(ended)) return;
    this.opts.vssUrls
      .releaseFence(nodeId, new Date(ended + 1000))
      .catch((err) => this.opts.log.warn({ nodeId, err: (err as Error).message }, "could not release the VSS fence of a restarted daemon: its next unlock answers VssFenced until POST /vssclearfence"));
  }

  private reportExit(nodeId: string, detail: string) {
    for (const listener of this.exitListeners) listener(nodeId, detail);
  }

  private wakeWaiters() {
    const waiters = this.changed;
    this.changed = [];
    for (const wake of waiters) wake();
  }

  /** Waits, on watch events, until `done` holds; `reason` says what was last seen on timeout. */
  private async until(done: () => boolean, timeoutMs: number, what: string, reason?: () => string | undefined) {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) {
        const seen = reason?.();
        throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${seen ? `: ${seen}` : ''}`);
      }
      // Woken by a change, or every second anyway (a watch that is down delivers nothing).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 1_000));
        this.changed.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private async pollUntil(done: () => Promise<boolean>, timeoutMs: number, what: string) {
    const deadline = Date.now() + timeoutMs;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/**
 * Whether Kubernetes brings the node's pod up by itself, its objects being current: no pod yet (the
 * StatefulSet controller creates it), one terminating (its successor follows), or the current one
 * not ready yet without a fatal problem (scheduling, pulling its image, the daemon starting). A
 * pod of another version needs start() to replace it, and a fatal one (an image that cannot be
 * pulled, a daemon that exits) is left to the loop's backoff.
 */
function onItsWay(pod: V1Pod | undefined, version: string | undefined): boolean {
  if (!pod || pod.metadata?.deletionTimestamp) return true;
  if (pod.metadata?.annotations?.[IMAGE_VERSION_ANNOTATION] !== version) return false;
  return !podProblem(pod)?.fatal;
}

function isReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function networkOf(set: V1StatefulSet): NodeSpec['network'] {
  const args = set.spec?.template.spec?.containers.find((c) => c.name === CONTAINER)?.args ?? [];
  return args[args.indexOf('--network') + 1] === 'testnet' ? 'testnet' : 'regtest';
}

function lastExit(pod: V1Pod): string {
  const terminated = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.lastState?.terminated;
  return terminated ? `${terminated.reason ?? 'exited'}, code ${terminated.exitCode}` : 'no exit status';
}

/** The root public key a StatefulSet's daemon is started with; null: started without authentication. */
function rootPublicKeyOf(set: V1StatefulSet): string | null {
  const args = set.spec?.template.spec?.containers.find((c) => c.name === CONTAINER)?.args ?? [];
  const at = args.indexOf('--root-public-key');
  return at === -1 ? null : (args[at + 1] ?? null);
}

/** The peer port a StatefulSet binds on its machine (HostPort), if any. */
function hostPortOf(set: V1StatefulSet | undefined): number | undefined {
  return set?.spec?.template.spec?.containers.find((c) => c.name === CONTAINER)?.ports?.find((p) => p.name === 'peer')?.hostPort;
}
