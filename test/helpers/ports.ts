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
 *
 * Test files run in parallel workers (vitest's VITEST_POOL_ID): each worker draws from a block of
 * the space of its own, so two files running at once never share a port; only servers of one file
 * (or a worker's next file, once the last one's daemons are gone) draw from the same block. Outside
 * vitest (the benchmarks) the whole space. Ranges start on a multiple of 100: a small one and a
 * large one overlap only when they start at the same place.
 */
const FIRST_PORT = 10_300;
const LAST_PORT = 29_999;
const STEP = 100;
const BLOCKS = 4;
const CLUSTER_PORTS = [16443, 23790, 23800];

export function randomNodePortRange(size = 100): string {
  const pool = Number(process.env.VITEST_POOL_ID);
  const blockSize = Math.floor((LAST_PORT + 1 - FIRST_PORT) / BLOCKS / STEP) * STEP;
  const [low, high] = Number.isInteger(pool) && pool > 0
    ? [FIRST_PORT + ((pool - 1) % BLOCKS) * blockSize, FIRST_PORT + ((pool - 1) % BLOCKS + 1) * blockSize - 1]
    : [FIRST_PORT, LAST_PORT];
  const starts = Math.floor((high + 1 - size - low) / STEP) + 1;
  if (starts < 1) throw new Error(`no node port range of ${size} fits ${low}-${high}`);
  for (;;) {
    const from = low + Math.floor(Math.random() * starts) * STEP;
    const to = from + size - 1;
    if (!CLUSTER_PORTS.some((port) => port >= from && port <= to)) return `${from}-${to}`;
  }
}
