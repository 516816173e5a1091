// Allocates the (REST, Lightning peer) port pair of a new node from the configured range,
// skipping ports held by other nodes and ports something else on the machine already listens on.
import net from 'node:net';

export async function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export async function allocatePortPair(
  range: { from: number; to: number },
  taken: Set<number>,
  probe: (port: number) => Promise<boolean> = isPortFree,
): Promise<[number, number] | undefined> {
  const found: number[] = [];
  for (let port = range.from; port <= range.to && found.length < 2; port++) {
    if (taken.has(port)) continue;
    if (await probe(port)) found.push(port);
  }
  return found.length === 2 ? [found[0]!, found[1]!] : undefined;
}
