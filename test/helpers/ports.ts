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
 * test file must never take the port another file's server is about to listen on.
 */
export function randomNodePortRange(size = 100): string {
  const from = 10_000 + Math.floor(Math.random() * 220) * size;
  return `${from}-${from + size - 1}`;
}
