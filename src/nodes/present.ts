// How a node and its builds look in API responses: the SPEC's Node and Build shapes, whose fields
// domain/node-answer.ts defines (the return types make the compiler ask for each).
import { buildPhaseOf, type Build, type Node } from '../domain/nodes.ts';
import type { ApiBuild, ApiNode } from '../domain/node-answer.ts';

export type { ApiBuild, ApiNode };

export const DEFAULT_PEER_PORT = 9735;

export interface PresentOptions {
  nodeApiUrl: string;
  peerHost: string;
  /** The port and scheme of nodeApiUrl (nodeApiAddress), worked out once. */
  nodeApiPort: number;
  nodeApiProtocol: 'https' | 'http';
  /** VSS_MAX_BYTES_PER_NODE: shown beside a node's VSS use. */
  vssSoftLimitBytes: number;
}

/** Where invoke_url points: its port (explicit, or the scheme's own) and its scheme. */
export function nodeApiAddress(nodeApiUrl: string): Pick<PresentOptions, 'nodeApiPort' | 'nodeApiProtocol'> {
  const url = new URL(nodeApiUrl);
  const nodeApiProtocol = url.protocol === 'https:' ? 'https' : 'http';
  return { nodeApiProtocol, nodeApiPort: url.port ? Number(url.port) : nodeApiProtocol === 'https' ? 443 : 80 };
}

/** A build's id: its node and number, which never change (builds have no other key). */
export const buildId = (b: Pick<Build, 'nodeId' | 'buildNumber'>) => `${b.nodeId}-${b.buildNumber}`;

export function presentBuild(b: Build): ApiBuild {
  return {
    id: buildId(b),
    buildNumber: b.buildNumber,
    buildStatus: b.status,
    buildComplete: b.status !== 'IN_PROGRESS',
    currentPhase: buildPhaseOf(b.status, b.phase ?? null),
    timestamp: b.startedAt.toISOString(),
    action: b.action,
    imageVersion: b.imageVersion,
    finishedAt: b.finishedAt ? b.finishedAt.toISOString() : null,
    ...(b.error ? { error: b.error } : {}),
  };
}

export function presentNode(n: Node, builds: Build[], opts: PresentOptions): ApiNode {
  return {
    nodeId: n.id,
    name: n.name,
    network: n.network,
    status: n.status,
    locked: n.locked,
    initialized: n.initialized,
    // Whether the service unlocks the node after each daemon start; the sealed password never leaves.
    autoUnlock: n.autoUnlockSealed !== null,
    continuousState: n.continuousState,
    // The original's form (`<gateway>/nodes/<user_id>/<node_id>/`): its clients split it on '/nodes'.
    invoke_url: `${opts.nodeApiUrl}/nodes/${n.userId}/${n.id}/`,
    port: opts.nodeApiPort,
    protocol: opts.nodeApiProtocol,
    settings: n.settings ?? {},
    builds: builds.map(presentBuild),
    rln_commit_id: n.imageVersion,
    peerDNS: n.peerHost ?? opts.peerHost,
    // Until a runtime reports the port (a Kubernetes Service), RLN's default peer port.
    peerPort: n.peerPort ?? DEFAULT_PEER_PORT,
    createdAt: n.createdAt.toISOString(),
    updatedAt: n.updatedAt.toISOString(),
    storage: n.storage && {
      usedBytes: n.storage.usedBytes,
      capacityBytes: n.storage.capacityBytes,
      availableBytes: n.storage.availableBytes,
      measuredAt: n.storage.measuredAt.toISOString(),
    },
    vss: n.vss && {
      usedBytes: n.vss.usedBytes,
      softLimitBytes: opts.vssSoftLimitBytes,
      measuredAt: n.vss.measuredAt.toISOString(),
    },
  };
}

/**
 * The answer to POST /api/nodes (SPEC endpoint 2): the SPEC's fields, and the whole Node as GET
 * /api/nodes/{id} shows it at `data.node` (where the original service's clients read it). Stored
 * as is for idempotent retries.
 */
export function presentCreatedNode(n: Node, node: ApiNode) {
  return {
    data: { nodeId: n.id, name: n.name, network: n.network, status: 'STARTING' as const, node },
    message: `Node ${n.name} is being created`,
  };
}
