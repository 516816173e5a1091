// How a node and its builds look in API responses (the SPEC's Node and Build shapes).
import type { BuildRow } from '../db/builds.ts';
import type { NodeRow } from '../db/nodes.ts';

export const DEFAULT_PEER_PORT = 9735;

export interface PresentOptions {
  nodeApiUrl: string;
  peerHost: string;
}

export function presentBuild(b: BuildRow) {
  return {
    buildNumber: b.build_number,
    buildStatus: b.status,
    buildComplete: b.status !== 'IN_PROGRESS',
    timestamp: b.started_at.toISOString(),
    action: b.action,
    imageVersion: b.image_version,
    finishedAt: b.finished_at ? b.finished_at.toISOString() : null,
    ...(b.error ? { error: b.error } : {}),
  };
}

export function presentNode(n: NodeRow, builds: BuildRow[], opts: PresentOptions) {
  return {
    nodeId: n.id,
    name: n.name,
    network: n.network,
    status: n.status,
    locked: n.locked,
    initialized: n.initialized,
    // Whether the service unlocks the node after each daemon start; the sealed password never leaves.
    autoUnlock: n.auto_unlock_sealed !== null,
    invoke_url: `${opts.nodeApiUrl}/${n.user_id}/${n.id}/`,
    settings: n.settings ?? {},
    builds: builds.map(presentBuild),
    rln_commit_id: n.image_version,
    peerDNS: n.peer_host ?? opts.peerHost,
    // Until a runtime reports the port (a Kubernetes Service), RLN's default peer port.
    peerPort: n.peer_port ?? DEFAULT_PEER_PORT,
    createdAt: n.created_at.toISOString(),
    updatedAt: n.updated_at.toISOString(),
  };
}

export type ApiNode = ReturnType<typeof presentNode>;

/** The answer to POST /api/nodes (SPEC endpoint 2); stored as is for idempotent retries. */
export function presentCreatedNode(n: NodeRow) {
  return {
    data: { nodeId: n.id, name: n.name, network: n.network, status: 'STARTING' as const },
    message: `Node ${n.name} is being created`,
  };
}
