// The metrics listener: `GET /metrics` in Prometheus' text format on its own port (METRICS_PORT),
// apart from the API and the gateways, so that it is never reachable where they are published;
// anything else is refused. Started and drained by app.ts like the other listeners.
import http from 'node:http';
import type { Registry } from 'prom-client';
import { drainServer } from '../http/drain.ts';
import { explainListenError } from '../http/listen-error.ts';
import type { Logger } from '../logger.ts';

export interface MetricsListener {
  server: http.Server;
  /** Stops accepting; a scrape under way may finish until `deadline` (epoch ms). */
  stop(deadline?: number): Promise<void>;
}

export interface MetricsListenerOptions {
  registry: Registry;
  host: string;
  port: number;
  log: Logger;
}

export async function startMetricsListener({ registry, host, port, log }: MetricsListenerOptions): Promise<MetricsListener> {
  // A scraper is a machine on the inside: it has no reason to be slow.
  const server = http.createServer({ requestTimeout: 10_000, headersTimeout: 5_000 }, (req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') return answer(res, 404, 'not found: the metrics are at GET /metrics\n');
    if (req.method !== 'GET') return answer(res, 405, 'method not allowed: GET /metrics\n', { allow: 'GET' });
    registry.metrics().then(
      (text) => answer(res, 200, text, { 'content-type': registry.contentType }),
      (err: unknown) => {
        log.error({ err }, 'the metrics could not be collected');
        answer(res, 500, 'the metrics could not be collected\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (err: Error) => reject(explainListenError(err, 'METRICS_PORT', host, port));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  return { server, stop: async (deadline = Date.now()) => void (await drainServer(server, deadline)) };
}

function answer(res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(body);
}
