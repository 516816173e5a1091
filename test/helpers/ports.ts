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

export function randomNodePortRange(size = 100): string {
  const from = 20_000 + Math.floor(Math.random() * 300) * size;
  return `${from}-${from + size - 1}`;
}
