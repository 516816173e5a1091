// Waiting for a node to reach a status with the API's long poll (GET /api/nodes/{id}?waitFor=),
// which answers as soon as the node gets there: no polling interval to choose, no missed moment.
import { RlnCloudError, type Node, type NodeStatus, type RlnCloudClient } from './client.ts';

// The API waits at most 60 s per request (a longer timeout is a 400).
const MAX_WAIT_SECONDS = 60;

export interface WaitOptions {
  /** How long to wait in all, in ms (default 120 s); the last request may end up to a second later. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Resolves with the node once it has `status`. Rejects with an RlnCloudError on an error answer
 * (404 `node_not_found`, ...), and with an Error when the node was DESTROYED first (it will never
 * get there) or the time ran out; a FAILED node is waited for like any other, since a start can
 * still bring it to RUNNING.
 */
export async function waitForNode(client: RlnCloudClient, nodeId: string, status: NodeStatus, options: WaitOptions = {}): Promise<Node> {
  const { timeoutMs = 120_000, signal } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seconds = Math.min(MAX_WAIT_SECONDS, Math.max(1, Math.ceil((deadline - Date.now()) / 1000)));
    const { data, error, response } = await client.GET('/api/nodes/{id}', {
      params: { path: { id: nodeId }, query: { waitFor: status, timeout: String(seconds) } },
      signal,
    });
    if (error !== undefined || data === undefined) throw new RlnCloudError(response.status, error);
    const node = data.data;
    if (node.status === status) return node;
    if (node.status === 'DESTROYED') throw new Error(`node ${nodeId} was destroyed while waiting for ${status}`);
    if (Date.now() >= deadline) throw new Error(`node ${nodeId} did not become ${status} within ${timeoutMs} ms; it is ${node.status}`);
  }
}
