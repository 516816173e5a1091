// A lean keep-alive HTTP GET for load generation (fetch costs more client CPU than the server we
// measure, on a 2-core machine where client and server share the cores).
import http from 'node:http';

export function keepAliveGetter(base: string, headers: Record<string, string>, maxSockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const url = new URL(base);
  return (path: string) =>
    new Promise<number>((resolve, reject) => {
      const req = http.get({ host: url.hostname, port: url.port, path, headers, agent }, (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
    });
}
