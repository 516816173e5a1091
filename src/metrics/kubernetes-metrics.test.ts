// The kubernetes runtime's two metrics as a scrape shows them: every verb's series from the start
// (a rate is right from the first request), moved by the runtime's hooks; absent on the process
// runtime, which asks no API server. The hooks' callers: runtime/kubernetes/api-requests.test.ts.
import { describe, expect, it } from 'vitest';
import type { Database } from '../db/database.ts';
import { createLogger } from '../logger.ts';
import { API_VERBS } from '../runtime/kubernetes/api-requests.ts';
import { ServiceMetrics } from './service-metrics.ts';
import { KUBERNETES_METRIC_NAMES } from './definitions.ts';

/** Nothing here reads the database: only the gauges of shared state do, at a scrape of them. */
const noDatabase = { kind: 'pglite', commitSignals: {} } as unknown as Database;

const sample = async (metrics: ServiceMetrics, name: string) => {
  const text = await metrics.registry.getSingleMetric(name)?.get();
  return Object.fromEntries((text?.values ?? []).map((v) => [v.labels.verb ?? '', v.value]));
};

describe('the kubernetes runtime metrics', () => {
  it('count API requests by verb and the log streams open', async () => {
    const metrics = new ServiceMetrics(noDatabase, createLogger('silent'), { kubernetes: true });
    expect(await sample(metrics, 'rlncloud_kubernetes_api_requests_total')).toEqual(Object.fromEntries(API_VERBS.map((v) => [v, 0])));
    metrics.kubernetesApiRequested('watch');
    metrics.kubernetesApiRequested('watch');
    metrics.kubernetesApiRequested('patch');
    expect(await sample(metrics, 'rlncloud_kubernetes_api_requests_total')).toMatchObject({ watch: 2, patch: 1, list: 0, get: 0 });
    metrics.nodeLogStreamsChanged(1);
    metrics.nodeLogStreamsChanged(1);
    metrics.nodeLogStreamsChanged(-1);
    expect(await sample(metrics, 'rlncloud_node_log_streams_open')).toEqual({ '': 1 });
  });

  it('are absent on the process runtime, and exactly those KUBERNETES_METRIC_NAMES names', () => {
    const metrics = new ServiceMetrics(noDatabase, createLogger('silent'), {});
    for (const name of KUBERNETES_METRIC_NAMES) expect(metrics.registry.getSingleMetric(name)).toBeUndefined();
    metrics.kubernetesApiRequested('get');
    const withKubernetes = new ServiceMetrics(noDatabase, createLogger('silent'), { kubernetes: true });
    const names = (m: ServiceMetrics) => new Set(m.registry.getMetricsAsArray().map((x) => x.name));
    const added = [...names(withKubernetes)].filter((n) => !names(metrics).has(n));
    expect(added.sort()).toEqual([...KUBERNETES_METRIC_NAMES].sort());
  });
});
