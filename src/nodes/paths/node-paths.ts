// What a node's path means once a gateway has let the caller in (the gateways' one entry into
// nodes/): GET of the node itself is the control plane's status document; POST /unlock is completed
// by the service (node-unlocker.ts) and written into the owner's audit trail; POST /backup and
// /restore have their path confined to the node's own storage (backup-path.ts); POST /init and /lock
// are recorded once the daemon accepts them; everything else is forwarded as it came. Anything but
// the status document needs a daemon that may be called (the lifecycle's callDaemon rule).
//
// The gateway keeps what is HTTP: it reads the body when asked, writes the answer, and forwards.
import type { AuditLog } from '../../audit/audit-log.ts';
import type { ApiNode } from '../../domain/node-answer.ts';
import type { Node } from '../../domain/nodes.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { isSuccess, type RlnAnswer } from '../../rln/answer.ts';
import type { ClientFacts } from '../../rln/forward-headers.ts';
import { parseUnlockInput } from '../../rln/unlock-body.ts';
import type { NodeEndpoint } from '../../runtime/types.ts';
import type { NodeDaemons } from '../node-daemons.ts';
import { refusesBackupRestore, RESTORE_REFUSED_MESSAGE } from '../../domain/continuous-state.ts';
import { confineBackupBody, PATH_ROUTES } from './backup-path.ts';
import { requireDaemonCallable } from '../lifecycle.ts';
import type { AnswerWarning } from '../unlock/node-identity.ts';
import { recordSafely, type NodeUnlocker } from '../unlock/node-unlocker.ts';
import type { NodeService } from '../service.ts';

export interface NodePathsDeps {
  unlocker: Pick<NodeUnlocker, 'unlock'>;
  nodes: Pick<NodeService, 'markInitialized' | 'markLocked'>;
  /** Each node's daemon: its address, and where client backups are kept beside its storage (backup-path.ts). */
  daemons: Pick<NodeDaemons, 'of'>;
  /** Unlock attempts through the gateways go into the node owner's audit trail. */
  audit?: Pick<AuditLog, 'record'>;
  log: Logger;
}

/** A call of a node's path, as the gateway received it from a caller it let in. */
export interface NodePathCall {
  method: string;
  /** As the gateway's path canonicalises it: 'nodeinfo', '' for the node itself. */
  route: string;
  /** The query, with its '?', or ''. */
  search: string;
  client: ClientFacts;
  /** The member who calls (bearer gateway), named in the audit trail; undefined for a certificate. */
  member?: { userId: string; email: string };
  /** The request's body as text, at most `limit` bytes (`what` names it in the refusal); read only when a call needs it. */
  readBody(limit: number, what: string): Promise<string>;
}

/** The status document: what the control plane knows, without asking the node (fields of the Node answer). */
export type StatusDocument = Pick<ApiNode, 'nodeId' | 'name' | 'network' | 'status' | 'locked' | 'initialized' | 'rln_commit_id'>;

/** What the gateway sends back: a document of the service's, a node's answer to a call composed here, or the call forwarded. */
export type NodePathAnswer =
  | { kind: 'document'; document: StatusDocument }
  /** The node's answer passes unchanged; the service's warnings ride beside it (nodes/unlock/node-identity.ts). */
  | { kind: 'node answer'; answer: RlnAnswer; warnings: AnswerWarning[] }
  /** Forward the request as it came to `endpoint` at `path`; `onAnswer` records what the node accepted. */
  | { kind: 'forward'; endpoint: NodeEndpoint; path: string; onAnswer?: (status: number) => Promise<void> };

// An unlock body is a password and a few announce fields; a backup's a path and a password.
const UNLOCK_BODY_LIMIT = 64 * 1024;
const BACKUP_BODY_LIMIT = 64 * 1024;

// The calls whose success the control plane records.
const RECORDED = new Set(['unlock', 'init', 'lock']);

export class NodePaths {
  constructor(private readonly deps: NodePathsDeps) {}

  /**
   * Whether the node is read afresh for this call: the status document, the calls the control plane
   * records, and a restore (refused by the node's settings: refusesBackupRestore) never use a remembered row.
   */
  readsFresh(method: string, route: string): boolean {
    return route === '' || (method === 'POST' && (RECORDED.has(route) || route === 'restore'));
  }

  /**
   * Synchronous for a forwarded call (nothing to wait for on the path of every request); a promise
   * only for the calls composed here. Throws (or rejects with) an AppError to answer.
   */
  serve(node: Node, call: NodePathCall): NodePathAnswer | Promise<NodePathAnswer> {
    const { method, route } = call;
    if (route === '') {
      if (method !== 'GET' && method !== 'HEAD') {
        throw new AppError('method_not_allowed', `${method} is not allowed on a node itself; GET it, or call a route under it`);
      }
      return { kind: 'document', document: statusDocument(node) };
    }
    requireDaemonCallable(node);
    if (method === 'POST' && route === 'unlock') return this.unlock(node, call);
    if (method === 'POST' && route === 'restore' && refusesBackupRestore(node)) {
      throw new AppError('restore_refused_continuous_state', RESTORE_REFUSED_MESSAGE);
    }
    if (method === 'POST' && PATH_ROUTES.has(route)) return this.confinedBackupCall(node, call);
    return { kind: 'forward', endpoint: this.deps.daemons.of(node).endpoint, path: `/${route}${call.search}`, onAnswer: method === 'POST' ? this.recorder(node, route) : undefined };
  }

  /** What the control plane records when the node accepted a call that changes its state. */
  private recorder(node: Node, route: string): ((status: number) => Promise<void>) | undefined {
    const record =
      route === 'init' ? { what: 'initialized', call: () => this.deps.nodes.markInitialized(node.id) }
      : route === 'lock' ? { what: 'locked', call: () => this.deps.nodes.markLocked(node.id) }
      : undefined;
    if (!record) return undefined;
    return async (status: number) => {
      if (isSuccess(status)) await recordSafely(this.deps.log, node.id, record.what, record.call);
    };
  }

  private async unlock(node: Node, call: NodePathCall): Promise<NodePathAnswer> {
    const input = parseUnlockInput(await call.readBody(UNLOCK_BODY_LIMIT, 'unlock'));
    const answer = await this.deps.unlocker.unlock(node, input, { 'x-forwarded-for': call.client.address, 'x-forwarded-proto': call.client.proto });
    void this.deps.audit?.record({
      userId: node.userId,
      actor: call.client.proto === 'https' ? 'gateway:mtls' : 'gateway:bearer',
      actorUserId: call.member?.userId ?? null,
      actorEmail: call.member?.email ?? null,
      sourceIp: call.client.address,
      action: 'node.unlock',
      target: node.id,
      nodeId: node.id,
      outcome: isSuccess(answer.status) ? 'succeeded' : 'failed',
      details: isSuccess(answer.status) ? {} : { nodeStatus: answer.status },
    });
    const { warnings, ...nodeAnswer } = answer;
    return { kind: 'node answer', answer: nodeAnswer, warnings };
  }

  /**
   * RLN's /backup or /restore with `backup_path` rewritten to the node's client backups folder
   * (backup-path.ts); a path the rule refuses never reaches the node (400). The node's answer passes
   * through unchanged.
   */
  private async confinedBackupCall(node: Node, call: NodePathCall): Promise<NodePathAnswer> {
    const daemon = this.deps.daemons.of(node);
    const body = confineBackupBody(await call.readBody(BACKUP_BODY_LIMIT, call.route), (fileName) => daemon.clientBackupPath(fileName));
    // The folder exists before the daemon is told to write into it, and a backup kept by an older
    // version (in the storage directory) is where a restore of it now looks.
    await daemon.prepareClientBackups().catch((err: unknown) => {
      this.deps.log.warn({ err, nodeId: node.id }, 'could not prepare the client backups folder');
      throw new AppError('node_unreachable', `the node's client backups folder could not be prepared: ${(err as Error).message}`);
    });
    const answer = await daemon.call('POST', `/${call.route}${call.search}`, {
      jsonText: body,
      headers: { 'x-forwarded-for': call.client.address, 'x-forwarded-proto': call.client.proto },
    });
    return { kind: 'node answer', answer, warnings: [] };
  }
}

/** GET {gateway}/<user_id>/<node_id>: what the control plane knows, without asking the node. */
export function statusDocument(node: Node): StatusDocument {
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
