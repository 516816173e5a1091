// What both gateways do once they know the caller may use the node: the node's status document,
// the unlock the gateway completes itself, /backup and /restore with their path confined to the
// node's own storage (backup-path.ts), /init (recorded on success), and everything else forwarded
// as it came. The node must be RUNNING for anything but the status document.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { NodeService } from '../nodes/service.ts';
import type { NodeEndpoint, NodeStorageFiles } from '../runtime/types.ts';
import { headersToClient, type ClientFacts } from '../rln/forward-headers.ts';
import { sendGatewayError, sendJson } from './gateway-reply.ts';
import type { RlnClient } from '../rln/client.ts';
import { isSuccess } from '../rln/answer.ts';
import { recordSafely, requireRunning, type NodeUnlocker } from '../nodes/node-unlocker.ts';
import { parseUnlockInput } from '../rln/unlock-body.ts';
import { confineBackupBody, PATH_ROUTES } from './backup-path.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import type { Node } from '../domain/nodes.ts';
import type { ApiNode } from '../domain/node-answer.ts';

export interface NodeRequestDeps {
  rln: Pick<RlnClient, 'forward' | 'call'>;
  unlocker: NodeUnlocker;
  nodes: Pick<NodeService, 'markInitialized' | 'markLocked'>;
  endpointOf: (node: Node) => NodeEndpoint;
  /** Where client backups are kept on a node, beside its storage (runtime storageFiles, backup-path.ts). */
  clientBackups: Pick<NodeStorageFiles, 'clientBackupPath' | 'prepareClientBackups'>;
  /** Unlock attempts through the gateways go into the node owner's audit trail. */
  audit?: Pick<AuditLog, 'record'>;
  log: Logger;
}

export interface NodeRequest {
  requestId: string;
  node: Node;
  route: string;
  search: string;
  client: ClientFacts;
  /** The member who calls (bearer gateway), named in the audit trail; undefined for a certificate. */
  member?: { userId: string; email: string };
}

/** Where the gateways' unlock carries the service's warnings (nodes/node-identity.ts), one per header line. */
export const WARNING_HEADER = 'x-rln-cloud-warning';

// An unlock body is a password and a few announce fields; a backup's a path and a password.
const UNLOCK_BODY_LIMIT = 64 * 1024;
const BACKUP_BODY_LIMIT = 64 * 1024;

/**
 * Synchronous for a forwarded request (the RLN client answers every failure itself); a promise
 * only for the unlock the gateway composes. Throws (or rejects with) an AppError to answer.
 */
export function serveNodeRequest(deps: NodeRequestDeps, req: IncomingMessage, res: ServerResponse, r: NodeRequest): void | Promise<void> {
  const method = req.method ?? 'GET';
  if (r.route === '') {
    if (method !== 'GET' && method !== 'HEAD') {
      throw new AppError('method_not_allowed', `${method} is not allowed on a node itself; GET it, or call a route under it`);
    }
    return sendJson(res, 200, statusDocument(r.node), { 'x-request-id': r.requestId });
  }
  requireRunning(r.node);
  if (method === 'POST' && r.route === 'unlock') return unlock(deps, req, res, r);
  if (method === 'POST' && PATH_ROUTES.has(r.route)) return confinedBackupCall(deps, req, res, r);
  deps.rln.forward({
    req,
    res,
    endpoint: deps.endpointOf(r.node),
    path: `/${r.route}${r.search}`,
    client: r.client,
    fail: (err, headers) => sendGatewayError(res, r.requestId, err, headers),
    onAnswer: method === 'POST' ? recorder(deps, r) : undefined,
  });
}

/** What the control plane records when the node accepted a call that changes its state. */
function recorder(deps: NodeRequestDeps, r: NodeRequest): ((status: number) => Promise<void>) | undefined {
  const record =
    r.route === 'init' ? { what: 'initialized', call: () => deps.nodes.markInitialized(r.node.id) }
    : r.route === 'lock' ? { what: 'locked', call: () => deps.nodes.markLocked(r.node.id) }
    : undefined;
  if (!record) return undefined;
  return async (status: number) => {
    if (isSuccess(status)) await recordSafely(deps.log, r.node.id, record.what, record.call);
  };
}

/** GET {gateway}/<user_id>/<node_id>: what the control plane knows, without asking the node (fields of the Node answer). */
export function statusDocument(node: Node): Pick<ApiNode, 'nodeId' | 'name' | 'network' | 'status' | 'locked' | 'initialized' | 'rln_commit_id'> {
  return {
    nodeId: node.id,
    name: node.name,
    network: node.network,
    status: node.status,
    locked: node.locked,
    initialized: node.initialized,
    rln_commit_id: node.imageVersion,
  };
}

async function unlock(deps: NodeRequestDeps, req: IncomingMessage, res: ServerResponse, r: NodeRequest) {
  const input = parseUnlockInput(await readSmallBody(req, UNLOCK_BODY_LIMIT));
  const answer = await deps.unlocker.unlock(r.node, input, { 'x-forwarded-for': r.client.address, 'x-forwarded-proto': r.client.proto });
  // The node's answer passes unchanged; a warning of the service's rides in a header of its own.
  const warnings = answer.warnings.map((w) => `${w.code}: ${w.message}`);
  res.writeHead(answer.status, [...headersToClient(answer.rawHeaders), ...warnings.flatMap((w) => [WARNING_HEADER, w])]);
  res.end(answer.body);
  void deps.audit?.record({
    userId: r.node.userId,
    actor: r.client.proto === 'https' ? 'gateway:mtls' : 'gateway:bearer',
    actorUserId: r.member?.userId ?? null,
    actorEmail: r.member?.email ?? null,
    sourceIp: r.client.address,
    action: 'node.unlock',
    target: r.node.id,
    nodeId: r.node.id,
    outcome: isSuccess(answer.status) ? 'succeeded' : 'failed',
    details: isSuccess(answer.status) ? {} : { nodeStatus: answer.status },
  });
}

/**
 * RLN's /backup or /restore with `backup_path` rewritten to the node's client backups folder
 * (backup-path.ts); a path the rule refuses never reaches the node (400). The node's answer passes
 * through unchanged.
 */
async function confinedBackupCall(deps: NodeRequestDeps, req: IncomingMessage, res: ServerResponse, r: NodeRequest) {
  const body = confineBackupBody(await readSmallBody(req, BACKUP_BODY_LIMIT, r.route), (fileName) => deps.clientBackups.clientBackupPath(r.node.id, fileName));
  // The folder exists before the daemon is told to write into it, and a backup kept by an older
  // version (in the storage directory) is where a restore of it now looks.
  await deps.clientBackups.prepareClientBackups(r.node.id).catch((err: unknown) => {
    deps.log.warn({ err, nodeId: r.node.id }, 'could not prepare the client backups folder');
    throw new AppError('node_unreachable', `the node's client backups folder could not be prepared: ${(err as Error).message}`);
  });
  const answer = await deps.rln.call(deps.endpointOf(r.node), 'POST', `/${r.route}${r.search}`, {
    jsonText: body,
    headers: { 'x-forwarded-for': r.client.address, 'x-forwarded-proto': r.client.proto },
  });
  res.writeHead(answer.status, headersToClient(answer.rawHeaders));
  res.end(answer.body);
}

function readSmallBody(req: IncomingMessage, limit: number, what = 'unlock'): Promise<string> {
  const tooLarge = () => new AppError('payload_too_large', `the ${what} body is larger than ${limit} bytes`);
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        reject(tooLarge());
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
