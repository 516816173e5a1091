// Every metric the service exports, in one place: names, help, labels and buckets. Prometheus'
// naming: the `rlncloud_` prefix, base units (seconds), `_total` on counters, and labels with a
// handful of values each; never a node's or a user's id (one series per node would grow without
// bound, and a scrape is no place for tenants' names). docs/OPERATIONS.md, "Metrics", lists them.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Database } from '../db/database.ts';
import { countUnfinishedJobs } from '../db/jobs.ts';
import { countHeldPorts, countNodesHoldingPorts, countNodesByStatus } from '../db/nodes.ts';
import { fullestNodeStorage } from '../db/node-storage.ts';
import { countNodesOverVssLimit } from '../db/vss.ts';
import { countNodesWithVssPendingWrites } from '../db/vss-state.ts';
import { countRolloutsByState, countRunningRollouts, ROLLOUT_STATES } from '../db/rollouts.ts';
import { AUTHENTICATION_ROLLOUT_NODE_STATES, countAuthenticationRolloutNodes, findAuthenticationRollout } from '../db/authentication-rollout.ts';
import { countUnfinishedDeliveries } from '../db/webhook-deliveries.ts';
import { NODE_STATUSES, type BuildAction } from '../domain/nodes.ts';
import type { Logger } from '../logger.ts';
import { API_VERBS } from '../runtime/kubernetes/api-requests.ts';
import { STATUS_CLASSES } from './status-class.ts';

export const BUILD_ACTIONS = Object.keys({ create: 0, start: 0, stop: 0, upgrade: 0, destroy: 0, recover: 0, restart: 0 } satisfies Record<BuildAction, 0>) as BuildAction[];
export const BUILD_RESULTS = ['success', 'failure'] as const;
export const DELIVERY_RESULTS = ['succeeded', 'retry', 'failed', 'gone'] as const;
export const GATEWAYS = ['bearer', 'mtls'] as const;
export const BACKUP_RESULTS = ['succeeded', 'failed'] as const;
export const VSS_OPERATIONS = ['getObject', 'putObjects', 'deleteObject', 'listKeyVersions'] as const;
export const VSS_OUTCOMES = ['ok', 'conflict', 'invalid', 'no_such_key', 'refused', 'error'] as const;

// Buckets by what is measured: a build waits for a daemon to start (seconds to minutes), a webhook
// for a receiver (up to WEBHOOK_TIMEOUT, 15 s), a gateway call for a node (up to its 60 s timeout).
const BUILD_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
const DELIVERY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];
const GATEWAY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const BACKUP_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
// An API answer is mostly database work (milliseconds); a few wait on a daemon (a node's health).
const API_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const QUERY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export interface MetricOptions {
  /**
   * The range peer ports come from, its use reported: NODE_PORT_RANGE (process, two ports a node),
   * K8S_PEER_PORT_RANGE (HostPort, one a node) or K8S_NODE_PORT_RANGE (NodePort: one a node not
   * destroyed, `countNodes`, as the cluster allocates them). LoadBalancer mode has no such range.
   */
  nodePortRange?: { from: number; to: number; countNodes?: boolean };
  /** RUNTIME=kubernetes: its requests to the API server and its pod log streams are reported. */
  kubernetes?: boolean;
  /** VSS_MAX_BYTES_PER_NODE: rlncloud_vss_stores_over_soft_limit counts the stores past it. */
  vssSoftLimitBytes?: number;
  /** Older samples of a node's pending VSS writes no longer count (three VSS_PENDING_CHECK_INTERVAL_MS). */
  vssPendingSampleMaxAgeMs?: number;
}

/**
 * The service's metrics in `registry`. The gauges of shared state (jobs, nodes, rollouts) are read
 * from `db` at each scrape: every replica reports the same values (aggregate them with max, not
 * sum), and there is nothing to keep in step between scrapes.
 */
export function defineMetrics(registry: Registry, db: Database, log: Logger, options: MetricOptions = {}) {
  const registers = [registry];
  // First: a scrape collects in this order, so the pool is read before the reads below take connections.
  if (db.poolStats) definePoolGauges(registry, () => db.poolStats!());
  if (options.nodePortRange) defineNodePortGauge(registry, db, log, options.nodePortRange);
  // One read of the jobs table serves both job gauges: a scrape collects every metric at once.
  const unfinishedJobs = sharedRead(() => countUnfinishedJobs(db));
  const [setQueued, setRunning] = [jobCounts('queued'), jobCounts('running')];
  /** When each certificate served expires, told once it is loaded (ServiceMetrics.certificateServed). */
  const certificatesServed = new Map<string, Date>();
  const metrics = {
    certificatesServed,
    builds: new Counter({
      name: 'rlncloud_builds_total',
      help: 'Builds finished (create, start, stop, upgrade, destroy), by action and result.',
      labelNames: ['action', 'result'] as const,
      registers,
    }),
    buildDuration: new Histogram({
      name: 'rlncloud_build_duration_seconds',
      help: 'Time from a build being requested to its end, retries included.',
      labelNames: ['action', 'result'] as const,
      buckets: BUILD_BUCKETS,
      registers,
    }),
    jobsQueued: new Gauge({
      name: 'rlncloud_jobs_queued',
      help: 'Durable jobs waiting to run (due now or retrying later), by kind; the same on every replica.',
      labelNames: ['kind'] as const,
      registers,
      collect: fromDatabase(log, 'rlncloud_jobs_queued', async (gauge) => setQueued(gauge, await unfinishedJobs())),
    }),
    jobsRunning: new Gauge({
      name: 'rlncloud_jobs_running',
      help: 'Durable jobs claimed by a worker, by kind; the same on every replica.',
      labelNames: ['kind'] as const,
      registers,
      collect: fromDatabase(log, 'rlncloud_jobs_running', async (gauge) => setRunning(gauge, await unfinishedJobs())),
    }),
    jobsFailed: new Counter({
      name: 'rlncloud_jobs_failed_total',
      help: 'Durable jobs given up on after their last attempt, by kind.',
      labelNames: ['kind'] as const,
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'rlncloud_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by result: succeeded, retry (failed, tried again later), failed (the last attempt failed), gone (410).',
      labelNames: ['result'] as const,
      registers,
    }),
    webhookDeliveriesUnfinished: new Gauge({
      name: 'rlncloud_webhook_deliveries_unfinished',
      help: 'Webhook deliveries not finished, by state: pending (due now or retrying later), delivering; the same on every replica.',
      labelNames: ['state'] as const,
      registers,
      collect: fromDatabase(log, 'rlncloud_webhook_deliveries_unfinished', async (gauge) => {
        const counts = await countUnfinishedDeliveries(db);
        for (const state of ['pending', 'delivering'] as const) gauge.set({ state }, counts[state]);
      }),
    }),
    webhookDeliveryDuration: new Histogram({
      name: 'rlncloud_webhook_delivery_duration_seconds',
      help: "Time from sending a webhook to the receiver's whole answer (or the failure), by result.",
      labelNames: ['result'] as const,
      buckets: DELIVERY_BUCKETS,
      registers,
    }),
    gatewayRequests: new Counter({
      name: 'rlncloud_gateway_requests_total',
      help: 'Requests answered by the node access gateways, by gateway (bearer, mtls) and status class.',
      labelNames: ['gateway', 'status_class'] as const,
      registers,
    }),
    gatewayRequestDuration: new Histogram({
      name: 'rlncloud_gateway_request_duration_seconds',
      help: 'Time from a gateway request arriving to the end of its answer, by gateway and status class.',
      labelNames: ['gateway', 'status_class'] as const,
      buckets: GATEWAY_BUCKETS,
      registers,
    }),
    // By route pattern (a handful of dozens), never by path: see api/request-metrics-hook.ts.
    apiRequestDuration: new Histogram({
      name: 'rlncloud_api_request_duration_seconds',
      help: "Time from a management API request arriving to its answer sent, by method, route pattern ('unmatched' where none matched) and status class; its _count counts the answers.",
      labelNames: ['method', 'route', 'status_class'] as const,
      buckets: API_BUCKETS,
      registers,
    }),
    reconcileLastPass: new Gauge({
      name: 'rlncloud_reconcile_last_pass_timestamp_seconds',
      help: "When this replica's reconcile loop last completed a pass (Unix time); its start until its first pass, so a loop that never passes ages like one that stopped. Only the reconcile lease's holder passes: take max over replicas.",
      registers,
    }),
    certificateExpiry: new Gauge({
      name: 'rlncloud_certificate_expiry_seconds',
      help: 'Seconds until a certificate this replica uses expires (negative once it has), by certificate: ca (the node access CA, which no client certificate outlives), mtls_server (the mutual-TLS gateway\'s own).',
      labelNames: ['certificate'] as const,
      registers,
      collect() {
        for (const [certificate, notAfter] of certificatesServed) this.set({ certificate }, (notAfter.getTime() - Date.now()) / 1000);
      },
    }),
    rolloutsInProgress: new Gauge({
      name: 'rlncloud_rollouts_in_progress',
      help: 'Release rollouts upgrading nodes now (neither paused nor completed).',
      registers,
      collect: fromDatabase(log, 'rlncloud_rollouts_in_progress', async (gauge) => gauge.set(await countRunningRollouts(db)), false),
    }),
    rollouts: new Gauge({
      name: 'rlncloud_rollouts',
      help: 'Release rollouts by state (running, paused, completed); a paused one waits for an operator. The same on every replica.',
      labelNames: ['state'] as const,
      registers,
      collect: fromDatabase(log, 'rlncloud_rollouts', async (gauge) => {
        const counts = await countRolloutsByState(db);
        for (const state of ROLLOUT_STATES) gauge.set({ state }, counts[state]);
      }),
    }),
    // The authentication rollout (rln-cloud authentication rollout): one at a time, so its state is
    // one series at 1 (none before the first); a paused one waits for an operator, as a release's.
    authenticationRollout: new Gauge({
      name: 'rlncloud_authentication_rollout',
      help: "The authentication rollout's state: 1 for the state it is in (running, paused, completed), 0 for the others; all 0 before the first. The same on every replica.",
      labelNames: ['state'] as const,
      registers,
      collect: fromDatabase(log, 'rlncloud_authentication_rollout', async (gauge) => {
        const rollout = await findAuthenticationRollout(db);
        for (const state of ROLLOUT_STATES) gauge.set({ state }, rollout?.state === state ? 1 : 0);
      }),
    }),
    authenticationRolloutNodes: new Gauge({
      name: 'rlncloud_authentication_rollout_nodes',
      help: "Nodes of the latest authentication rollout by state (pending, restarting, succeeded, failed, skipped). The same on every replica.",
      labelNames: ['state'] as const,
      registers,
      collect: fromDatabase(log, 'rlncloud_authentication_rollout_nodes', async (gauge) => {
        const counts = await countAuthenticationRolloutNodes(db);
        for (const state of AUTHENTICATION_ROLLOUT_NODE_STATES) gauge.set({ state }, counts[state]);
      }),
    }),
    nodes: new Gauge({
      name: 'rlncloud_nodes',
      help: 'Nodes by status, DESTROYED ones still kept included; the same on every replica.',
      labelNames: ['status'] as const,
      registers,
      collect: fromDatabase(log, 'rlncloud_nodes', async (gauge) => {
        const counts = new Map((await countNodesByStatus(db)).map((r) => [r.status, r.n]));
        for (const status of NODE_STATUSES) gauge.set({ status }, counts.get(status) ?? 0);
      }),
    }),
    // One series, not one per node: the alert says a volume is filling, the node list names which.
    nodeStorageFullest: new Gauge({
      name: 'rlncloud_node_storage_fullest_ratio',
      help: "The largest share of its volume in use among RUNNING nodes (0-1), as last measured; 0 before any measurement; the same on every replica.",
      registers,
      collect: fromDatabase(log, 'rlncloud_node_storage_fullest_ratio', async (gauge) => gauge.set((await fullestNodeStorage(db)) ?? 0), false),
    }),
    // Every channel update of a node that uses VSS waits on its write: its errors and latency are alerted on.
    vssRequests: new Counter({
      name: 'rlncloud_vss_requests_total',
      help: 'VSS requests answered, by operation and outcome (ok, conflict, invalid, no_such_key, refused, error).',
      labelNames: ['operation', 'outcome'] as const,
      registers,
    }),
    vssRequestDuration: new Histogram({
      name: 'rlncloud_vss_request_duration_seconds',
      help: 'Time a VSS request took in the service, from its body read to its answer, by operation.',
      labelNames: ['operation'] as const,
      buckets: GATEWAY_BUCKETS,
      registers,
    }),
    // How much group commit gathers (vss/write-group.ts): ones at a quiet time, more under load.
    vssWriteGroupSize: new Histogram({
      name: 'rlncloud_vss_write_group_size',
      help: 'Writes committed together by one statement of VSS group commit (unconditional single puts by a bound key).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 100],
      registers,
    }),
    vssWrittenBytes: new Counter({
      name: 'rlncloud_vss_written_bytes_total',
      help: 'Bytes of values written by successful VSS puts.',
      registers,
    }),
    // One series, not one per node: the alert says a store is past the limit, the node's page says which.
    vssStoresOverSoftLimit: new Gauge({
      name: 'rlncloud_vss_stores_over_soft_limit',
      help: "Nodes whose VSS store held more than VSS_MAX_BYTES_PER_NODE when last measured (every few minutes; writes are not refused); the same on every replica.",
      registers,
      collect: fromDatabase(
        log,
        'rlncloud_vss_stores_over_soft_limit',
        async (gauge) => gauge.set(options.vssSoftLimitBytes === undefined ? 0 : await countNodesOverVssLimit(db, options.vssSoftLimitBytes)),
        false,
      ),
    }),
    // One series again: the alert says some node's writes are not reaching VSS, its page says which.
    vssNodesWithPendingWrites: new Gauge({
      name: 'rlncloud_vss_nodes_with_pending_writes',
      help: "Running nodes whose daemon had state writes not yet in VSS (/vssbackupinfo's pending_kv_writes above 0) when last asked (every VSS_PENDING_CHECK_INTERVAL_MS); the same on every replica.",
      registers,
      collect: fromDatabase(
        log,
        'rlncloud_vss_nodes_with_pending_writes',
        async (gauge) => gauge.set(await countNodesWithVssPendingWrites(db, 0, options.vssPendingSampleMaxAgeMs ?? 180_000)),
        false,
      ),
    }),
    vssRefusals: new Counter({
      name: 'rlncloud_vss_refusals_total',
      help: 'VSS requests refused with AUTH, by reason (malformed, stale, bad_signature, unknown_store, node_destroyed, other_key).',
      labelNames: ['reason'] as const,
      registers,
    }),
    backups: new Counter({
      name: 'rlncloud_backups_total',
      help: 'Node backups ended, by result (an interrupted one counts as failed).',
      labelNames: ['result'] as const,
      registers,
    }),
    backupDuration: new Histogram({
      name: 'rlncloud_backup_duration_seconds',
      help: 'Time a backup took, from its start to its record, by result.',
      labelNames: ['result'] as const,
      buckets: BACKUP_BUCKETS,
      registers,
    }),
    // By plan and kind only: an account label would be a series per tenant (see above).
    apiCalls: new Counter({
      name: 'rlncloud_api_calls_total',
      help: 'API calls counted against the monthly quotas, by plan and kind (api: the management API, gateway: the node gateways), as each replica writes its batch (usage/api-call-meter.ts).',
      labelNames: ['plan', 'kind'] as const,
      registers,
    }),
    auditRecordFailures: new Counter({
      name: 'rlncloud_audit_record_failures_total',
      help: 'Audit events that could not be recorded (each also logged at error level with the event): alert on any.',
      registers,
    }),
    reconcilePass: new Histogram({
      name: 'rlncloud_reconcile_pass_seconds',
      help: 'Time of each reconcile pass of the replica holding the reconcile lease: it grows with the nodes whose daemon should run or runs.',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    reconciledNodes: new Gauge({
      name: 'rlncloud_reconcile_pass_nodes',
      help: 'Nodes the last reconcile pass of this replica looked at (0 on a replica without the reconcile lease).',
      registers,
    }),
    queryDuration: new Histogram({
      name: 'rlncloud_db_query_duration_seconds',
      help: 'Time of each database statement, waiting for a pooled connection included.',
      buckets: QUERY_BUCKETS,
      registers,
    }),
    kubernetes: options.kubernetes ? defineKubernetesMetrics(registry) : undefined,
  };

  // Known label values start at 0, so a rate is right from the first event and dashboards see every series.
  for (const action of BUILD_ACTIONS) {
    for (const result of BUILD_RESULTS) {
      metrics.builds.inc({ action, result }, 0);
      metrics.buildDuration.zero({ action, result });
    }
  }
  for (const result of DELIVERY_RESULTS) {
    metrics.webhookDeliveries.inc({ result }, 0);
    metrics.webhookDeliveryDuration.zero({ result });
  }
  for (const gateway of GATEWAYS) {
    for (const status_class of STATUS_CLASSES.filter((c) => c !== 'other')) {
      metrics.gatewayRequests.inc({ gateway, status_class }, 0);
      metrics.gatewayRequestDuration.zero({ gateway, status_class });
    }
  }
  // A series the 5xx alert divides by exists from the start: one route, one class.
  metrics.apiRequestDuration.zero({ method: 'GET', route: '/healthz', status_class: '2xx' });
  metrics.apiRequestDuration.zero({ method: 'GET', route: '/healthz', status_class: '5xx' });
  metrics.reconcileLastPass.set(Date.now() / 1000);
  for (const result of BACKUP_RESULTS) {
    metrics.backups.inc({ result }, 0);
    metrics.backupDuration.zero({ result });
  }
  return metrics;
}

export type ServiceMetricSet = ReturnType<typeof defineMetrics>;

/** The kubernetes runtime's metrics: absent on the process runtime (test/kubernetes/lifecycle.test.ts sees them exposed). */
export const KUBERNETES_METRIC_NAMES = ['rlncloud_kubernetes_api_requests_total', 'rlncloud_node_log_streams_open'] as const;

/** The kubernetes runtime's: absent on the process runtime, which asks no API server. */
function defineKubernetesMetrics(registry: Registry) {
  const registers = [registry];
  const apiRequests = new Counter({
    name: 'rlncloud_kubernetes_api_requests_total',
    help: 'Requests this replica sent to the Kubernetes API server, by verb (get, list, watch, create, patch, delete); a watch counts each time it is opened. At rest only the watches reopening: a rate growing with the nodes is a poll.',
    labelNames: ['verb'] as const,
    registers,
  });
  for (const verb of API_VERBS) apiRequests.inc({ verb }, 0);
  const logStreams = new Gauge({
    name: 'rlncloud_node_log_streams_open',
    help: "Pod log streams this replica holds open now, one per node whose log claim it holds and whose container runs: the API server and the kubelets hold as many.",
    registers,
  });
  return { apiRequests, logStreams };
}

/** PostgreSQL's connection pool (pg); PGlite has none, and these are absent there. */
function definePoolGauges(registry: Registry, stats: () => { total: number; idle: number; waiting: number }) {
  const registers = [registry];
  new Gauge({
    name: 'rlncloud_db_pool_connections',
    help: 'Connections the PostgreSQL pool holds open (idle or in use).',
    registers,
    collect() {
      this.set(stats().total);
    },
  });
  new Gauge({
    name: 'rlncloud_db_pool_idle_connections',
    help: 'Open PostgreSQL connections not in use.',
    registers,
    collect() {
      this.set(stats().idle);
    },
  });
  new Gauge({
    name: 'rlncloud_db_pool_waiting_requests',
    help: 'Statements and transactions waiting for a free PostgreSQL connection (the pool is exhausted when this stays above 0).',
    registers,
    collect() {
      this.set(stats().waiting);
    },
  });
}

/** The range peer ports come from (see MetricOptions): when none is free, no node can be created. */
function defineNodePortGauge(registry: Registry, db: Database, log: Logger, range: NonNullable<MetricOptions['nodePortRange']>) {
  const size = range.to - range.from + 1;
  new Gauge({
    name: 'rlncloud_node_ports',
    help: "Ports of the range nodes' ports come from, by state: used (held by a node not destroyed) or free. NODE_PORT_RANGE (process runtime, two a node), K8S_PEER_PORT_RANGE (kubernetes, HostPort) or K8S_NODE_PORT_RANGE (kubernetes, NodePort: other Services' ports not counted); the same on every replica.",
    labelNames: ['state'] as const,
    registers: [registry],
    collect: fromDatabase(log, 'rlncloud_node_ports', async (gauge) => {
      const used = range.countNodes ? await countNodesHoldingPorts(db) : await countHeldPorts(db, range);
      gauge.set({ state: 'used' }, used);
      gauge.set({ state: 'free' }, size - used);
    }),
  });
}

/** Sets a job gauge from the table's counts: a kind seen before and without jobs now drops to 0. */
function jobCounts(state: 'queued' | 'running') {
  const kinds = new Set<string>();
  return (gauge: Gauge<'kind'>, rows: Array<{ kind: string; state: string; n: number }>) => {
    for (const row of rows) kinds.add(row.kind);
    for (const kind of kinds) gauge.set({ kind }, rows.find((r) => r.kind === kind && r.state === state)?.n ?? 0);
  };
}

/**
 * The collect function of a gauge read from the database. A failed read empties the gauge, or sets
 * it to NaN when it has no labels (prom-client would show 0): a stale value or a 0 would look like a
 * fact. It is logged once until a read succeeds again; the scrape itself still answers, with the
 * process's and the counters' values.
 */
function fromDatabase<T extends string>(log: Logger, metric: string, read: (gauge: Gauge<T>) => Promise<void>, labelled = true) {
  let failing = false;
  return async function collect(this: Gauge<T>) {
    try {
      await read(this);
      failing = false;
    } catch (err) {
      this.reset();
      if (!labelled) this.set(Number.NaN);
      if (!failing) log.warn({ err, metric }, 'a metric could not be read from the database');
      failing = true;
    }
  };
}

/** Calls made while one is under way share its answer. */
function sharedRead<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= read().finally(() => {
      pending = undefined;
    }));
}
