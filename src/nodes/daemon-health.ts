// Decides when a freshly started daemon is up: it is up once its REST API answers anything at
// all (a fresh node answers 403 "Node is locked", which is a healthy daemon).
import http from 'node:http';
import type { NodeEndpoint } from '../runtime/types.ts';

export function probeDaemon(ep: NodeEndpoint, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: ep.host, port: ep.port, path: '/nodeinfo', timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/**
 * Waits until the daemon answers; fails early when `hasExited` says the process is gone, so a
 * daemon that crashes at start-up fails its build in milliseconds, not after the whole timeout.
 */
export async function waitForDaemon(
  ep: NodeEndpoint,
  timeoutMs: number,
  hasExited: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  while (Date.now() < deadline) {
    if (await probeDaemon(ep)) return;
    if (await hasExited()) throw new Error('the daemon exited during start-up');
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 500);
  }
  throw new Error(`the daemon did not answer within ${Math.round(timeoutMs / 1000)} s`);
}
