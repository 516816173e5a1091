// Decides when a freshly started daemon is up: it is up once its REST API answers anything at
// all (a fresh node answers 403 "Node is locked", which is a healthy daemon).
import type { RlnClient } from '../../rln/client.ts';
import type { NodeEndpoint } from '../../runtime/types.ts';

const PROBE_TIMEOUT_MS = 1_000;

/**
 * Waits until the daemon answers; fails early when `hasExited` says the process is gone, so a
 * daemon that crashes at start-up fails its build in milliseconds, not after the whole timeout.
 */
export async function waitForDaemon(
  rln: Pick<RlnClient, 'answers'>,
  ep: NodeEndpoint,
  timeoutMs: number,
  hasExited: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  while (Date.now() < deadline) {
    if (await rln.answers(ep, PROBE_TIMEOUT_MS)) return;
    if (await hasExited()) throw new Error('the daemon exited during start-up');
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 500);
  }
  throw new Error(`the daemon did not answer within ${Math.round(timeoutMs / 1000)} s`);
}
