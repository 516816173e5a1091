// The process's own metrics (CPU, memory, event loop lag, GC, handles), prom-client's defaults
// under the `rlncloud_` prefix. One set per process, however many servers it runs (the tests run
// several): the event loop and GC observers they install belong to the process, not to a server.
import { collectDefaultMetrics, Registry } from 'prom-client';

let processRegistry: Registry | undefined;

/**
 * prom-client adds a `_total` gauge beside each of its per-type gauges of handles, requests and
 * resources (the sum of the other); a `_total` suffix promises a counter, so they are left out.
 */
const SUMS_NAMED_LIKE_COUNTERS = ['rlncloud_nodejs_active_handles_total', 'rlncloud_nodejs_active_requests_total', 'rlncloud_nodejs_active_resources_total'];

export function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'rlncloud_' });
    for (const name of SUMS_NAMED_LIKE_COUNTERS) processRegistry.removeSingleMetric(name);
  }
  return processRegistry;
}
