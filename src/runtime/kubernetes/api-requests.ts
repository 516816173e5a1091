// What the kubernetes runtime asks of the API server, counted where it is sent, by verb (as the
// API server's own audit log names them): at rest a fleet should cost its watches only, so a
// request rate that grows with the nodes is a poll or a relist to find (docs/BENCHMARKS.md).
//
// Pure declarations, no client: metrics/ reads the verbs without loading the Kubernetes client.

export const API_VERBS = ['get', 'list', 'watch', 'create', 'patch', 'delete'] as const;
export type ApiVerb = (typeof API_VERBS)[number];

/** Told of each request as it is sent; a retry is a request of its own. */
export type CountRequest = (verb: ApiVerb) => void;

/** What the runtime reports; implemented by metrics/service-metrics.ts. */
export interface KubernetesMetrics {
  /** A request to the API server was sent (a watch: each time it is opened or reopened). */
  kubernetesApiRequested(verb: ApiVerb): void;
  /** A pod log stream was opened (+1) or ended (-1). */
  nodeLogStreamsChanged(delta: 1 | -1): void;
}
