// RLN's fork's flags for continuous state (issue #43): `--vss-url <the node's own VSS URL>`, and
// `--vss-allow-http` when that URL is plain http off loopback (the service's in-cluster address on
// Kubernetes, VSS_NODE_URL), which the daemon otherwise refuses. One rule for both runtimes.
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** Whether the URL's host is this machine's loopback: a pod cannot reach the service there. */
export const isLoopbackUrl = (url: string) => LOOPBACK.test(new URL(url).hostname);

/**
 * The flags for `vssUrl`. `passedAs` is what the command line carries instead of the URL itself
 * (on Kubernetes `$(RLN_VSS_URL)`, which the kubelet expands from the node's Secret, so that the
 * credential in the URL is not in the StatefulSet's spec); whether plain http must be allowed is
 * still decided from the URL.
 */
export function vssDaemonArgs(vssUrl: string | undefined, passedAs: string | undefined = vssUrl): string[] {
  if (vssUrl === undefined) return [];
  const url = new URL(vssUrl);
  const allowHttp = url.protocol === 'http:' && !LOOPBACK.test(url.hostname);
  return ['--vss-url', passedAs!, ...(allowHttp ? ['--vss-allow-http'] : [])];
}
