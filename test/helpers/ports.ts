// Free ports for test servers, and a private node port range per server so test files running in
// parallel never hand the same daemon port to two nodes.
import net from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Below Linux's ephemeral range (32768-60999), where freePort's ports come from: a daemon of one
 * test file must never take the port another file's server is about to listen on. Also clear of
 * the test cluster's ports (scripts/test-cluster.sh: 10248-10259, 16443, 23790, 23800) and of
 * Kubernetes' NodePort range (30000-32767), which kube-proxy holds open.
 */
export function randomNodePortRange(size = 100): string {
  for (;;) {
    const from = 10_300 + Math.floor(Math.random() * 190) * size;
    const to = from + size - 1;
    const clashes = [16443, 23790, 23800].some((port) => port >= from && port <= to);
    if (!clashes && to < 30_000) return `${from}-${to}`;
  }
}
