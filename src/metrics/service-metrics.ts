// The metrics of one running service: its own registry (never prom-client's global one, so several
// servers in one process keep theirs apart), the database with its statements timed, and the hooks
// the parts report through. Each part declares the few calls it makes (BuildMetrics in
// nodes/builds/build-job.ts, JobMetrics in jobs/worker.ts, ...) and is handed this object by the
// composition root: no part but this one knows prom-client.
import { Registry } from 'prom-client';
import type { Database } from '../db/database.ts';
import type { BuildAction } from '../domain/nodes.ts';
import type { Logger } from '../logger.ts';
import type { ApiVerb, KubernetesMetrics } from '../runtime/kubernetes/api-requests.ts';
import { defineMetrics, type MetricOptions, type ServiceMetricSet } from './definitions.ts';
import { processMetrics } from './process-metrics.ts';
import { STATUS_CLASSES, statusClass, statusClassIndex } from './status-class.ts';
import { timedDatabase } from './timed-database.ts';

export class ServiceMetrics implements KubernetesMetrics {
  /** This service's metrics and the process's, as the metrics listener serves them. */
  readonly registry: Registry;
  /** The database to hand every part: the same one, its statements timed. */
  readonly database: Database;
  private readonly metrics: ServiceMetricSet;

  /** `db`: the database as opened; the gauges read from it directly, so a scrape times none of its own reads. */
  constructor(db: Database, log: Logger, options: MetricOptions = {}) {
    const own = new Registry();
    this.metrics = defineMetrics(own, db, log, options);
    this.registry = Registry.merge([processMetrics(), own]);
    const queryDuration = this.metrics.queryDuration;
    this.database = timedDatabase(db, (seconds) => queryDuration.observe(seconds));
  }

  buildFinished(action: BuildAction, result: 'success' | 'failure', seconds: number) {
    this.metrics.builds.inc({ action, result });
    this.metrics.buildDuration.observe({ action, result }, seconds);
  }

  jobGivenUp(kind: string) {
    this.metrics.jobsFailed.inc({ kind });
  }

  deliveryAttempted(result: 'succeeded' | 'retry' | 'failed' | 'gone', seconds: number) {
    this.metrics.webhookDeliveries.inc({ result });
    this.metrics.webhookDeliveryDuration.observe({ result }, seconds);
  }

  apiCallsCounted(plan: string, kind: 'api' | 'gateway', calls: number) {
    this.metrics.apiCalls.inc({ plan, kind }, calls);
  }

  reconcilePassed(seconds: number, nodes: number) {
    this.metrics.reconcilePass.observe(seconds);
    this.metrics.reconciledNodes.set(nodes);
    this.metrics.reconcileLastPass.set(Date.now() / 1000);
  }

  apiRequestAnswered(method: string, route: string, status: number, seconds: number) {
    this.metrics.apiRequestDuration.observe({ method, route, status_class: statusClass(status) }, seconds);
  }

  certificateServed(certificate: 'ca' | 'mtls_server', notAfter: Date) {
    this.metrics.certificatesServed.set(certificate, notAfter);
  }

  vssAnswered(operation: string, outcome: string, seconds: number, writtenBytes: number) {
    this.metrics.vssRequests.inc({ operation, outcome });
    this.metrics.vssRequestDuration.observe({ operation }, seconds);
    if (writtenBytes > 0) this.metrics.vssWrittenBytes.inc(writtenBytes);
  }

  vssWriteGroup(writes: number) {
    this.metrics.vssWriteGroupSize.observe(writes);
  }

  vssRefused(reason: string) {
    this.metrics.vssRefusals.inc({ reason });
  }

  auditRecordFailed() {
    this.metrics.auditRecordFailures.inc();
  }

  kubernetesApiRequested(verb: ApiVerb) {
    this.metrics.kubernetes?.apiRequests.inc({ verb });
  }

  nodeLogStreamsChanged(delta: 1 | -1) {
    this.metrics.kubernetes?.logStreams.inc(delta);
  }

    backupFinished(result: 'succeeded' | 'failed', seconds: number | undefined) {
    this.metrics.backups.inc({ result });
    if (seconds !== undefined) this.metrics.backupDuration.observe({ result }, seconds);
  }

  /**
   * One gateway's recorder. Its label children are looked up here, once, so a request costs an
   * array index, a counter increment and a bucket search (about a microsecond with prom-client,
   * against the ~450 µs of CPU a gateway request takes; docs/BENCHMARKS.md).
   */
  requestRecorder(gateway: 'bearer' | 'mtls') {
    const counted = STATUS_CLASSES.map((status_class) => this.metrics.gatewayRequests.labels({ gateway, status_class }));
    const timed = STATUS_CLASSES.map((status_class) => this.metrics.gatewayRequestDuration.labels({ gateway, status_class }));
    return (status: number, seconds: number) => {
      const i = statusClassIndex(status);
      counted[i]!.inc();
      timed[i]!.observe(seconds);
    };
  }
}
