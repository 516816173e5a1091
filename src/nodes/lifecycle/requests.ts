// What the node lifecycle (../lifecycle.ts) judges and answers: the requests users and the system
// make of a node, what a create is judged on, the checks and rules the table is made of, and the
// decisions and refusals it gives. Types only.
import type { Build, BuildAction, NodeStatus, Node } from '../../domain/nodes.ts';
import type { PlanDefinition } from '../../domain/plans.ts';
import type { ErrorCode } from '../../errors.ts';
import type { NodeChange } from '../transition.ts';
import type { RestoreChoices, RestoreFence } from '../restore/restore-fence.ts';
import type { NodePorts } from '../../runtime/types.ts';

export type NodeRequest =
  // Users, through the management API (the web UI and the CLI call the same service).
  /** A new node: judged before there is a row (decide() is asked without a node), on what the service found. */
  | { type: 'create'; facts: CreationFacts }
  | { type: 'start' }
  | { type: 'stop' }
  /** `toVersion` is the latest release, undefined when none was published. */
  | { type: 'upgrade'; toVersion: string | undefined }
  | { type: 'destroy' }
  /** undefined leaves the URL as it is, null removes it. */
  | { type: 'updateSettings'; webhookUrl: string | null | undefined; continuousState?: boolean }
  /** The password, checked against the node (nodes/unlock/auto-unlock.ts) and sealed. */
  | { type: 'enableAutoUnlock'; sealed: string }
  | { type: 'disableAutoUnlock' }
  /** The node leaves with its owner: a final backup (backups/export.ts), judged before it starts. */
  | { type: 'export' }
  // The node gateways (and the management API's unlock and init), before a call reaches the daemon...
  | { type: 'callDaemon' }
  // ...and after the daemon accepted it.
  | { type: 'markUnlocked' }
  | { type: 'markLocked' }
  | { type: 'markInitialized' }
  // The system: builds finishing, the reconcile loop, rollouts, webhook delivery.
  /**
   * A create, start or upgrade build brought the daemon up; `imageVersion` when it changed the
   * image, `peer` when the runtime gives the node its peer address (a Kubernetes Service).
   */
  | { type: 'startBuildSucceeded'; imageVersion?: string; peer?: { host: string | null; port: number | null } }
  | { type: 'stopBuildSucceeded' }
  | { type: 'destroyBuildSucceeded' }
  /** The new image did not come up, the previous one (`imageVersion`) did. */
  | { type: 'upgradeRolledBack'; imageVersion: string }
  | { type: 'buildFailed' }
  | { type: 'daemonRestarted' }
  /** A restore of the node's wallet went into node `by`. */
  | { type: 'supersede'; by: string }
  | { type: 'rolloutUpgrade'; toVersion: string }
  /** The authentication rollout restarts a daemon started without RLN's authentication (rollout/authentication-rollout.ts). */
  | { type: 'authenticationRestart' }
  /** A webhook receiver at `url` answered 410 Gone. */
  | { type: 'webhookGone'; url: string }
  /** An automatic unlock could not use the sealed password `sealed` (the node refused it, ...). */
  | { type: 'autoUnlockFailed'; sealed: string }
  /** The export's final backup succeeded, in the transaction that records it (backups/backup-run.ts). */
  | { type: 'exportCompleted' }
  /** The node's volume is gone (nodes/health/storage-lost.ts): seen by the reconcile loop or the health probe. */
  | { type: 'storageLost' }
  /** A STORAGE_LOST node comes up on a fresh, empty volume (POST /api/nodes/{id}/recover). */
  | { type: 'recover' };

/**
 * What a create is judged on, found in the create's transaction (NodeService.createNode) in the
 * order the create rule checks it, and no further than the first refusal: what comes after takes
 * locks (the wallet's nodes, the account) a refused create has no use for. A fact not found yet is
 * undefined and refuses nothing.
 */
export interface CreationFacts {
  userId: string;
  /** The latest release, which the node will run; null when none was published. */
  release: string | null;
  /** The ports the runtime assigned the node; null when none are free. */
  ports?: NodePorts | null;
  /** A restore: what the restore fence found of the wallet's other nodes, and what the user chose. */
  restore?: { fence: RestoreFence; choices: RestoreChoices };
  /** The account's plan (null: none, no limit) and its live nodes. */
  plan?: { plan: PlanDefinition | null; liveNodes: number };
}

export type RequestType = NodeRequest['type'];
export type RequestOf<T extends RequestType> = Extract<NodeRequest, { type: T }>;

/** What decide() looks at: the node's row as the caller locked it. */
export type LifecycleNode = Pick<Node, 'id' | 'status' | 'locked' | 'initialized' | 'desiredState' | 'imageVersion' | 'settings' | 'autoUnlockSealed' | 'supersededBy'>;
export type BuildInProgress = Pick<Build, 'buildNumber' | 'action'>;

export type RefusalCode = Extract<
  ErrorCode,
  // A create's (not 409): the service cannot make a node now, or the account's plan has no room.
  | 'service_unavailable'
  | 'no_ports_available'
  | 'plan_limit_reached'
  // A restore's (409): one live copy of a wallet (restore/restore-fence.ts).
  | 'wallet_exported'
  | 'backup_older_than_source'
  | 'source_node_live'
  | 'node_destroyed'
  | 'build_in_progress'
  | 'already_running'
  | 'already_stopped'
  | 'nothing_to_upgrade'
  | 'node_not_running'
  | 'node_not_initialized'
  | 'node_superseded'
  | 'node_exported'
  | 'node_storage_lost'
  | 'storage_not_lost'
>;

export interface Refusal {
  code: RefusalCode;
  message: string;
  details?: Record<string, unknown>;
}

export type Decision =
  | { outcome: 'change'; change: NodeChange; build?: BuildAction }
  | { outcome: 'no change' }
  | { outcome: 'refused'; refusal: Refusal };

export interface Judged<R> {
  request: R;
  node: LifecycleNode;
  build: BuildInProgress | undefined;
}

/**
 * One check of a request. It holds in `statuses`, or when `holds` says so (`when` says it in
 * words); the first check that holds decides: the request is refused with `refusal`, or, without
 * one, accepted with nothing to change.
 */
export interface Check<R = NodeRequest> {
  statuses?: readonly NodeStatus[];
  when?: string;
  holds?: (j: Judged<R>) => boolean;
  refusal?: {
    code: RefusalCode;
    message: (j: Judged<R>) => string;
    /** Absent: the error carries no details. */
    details?: (j: Judged<R>) => Record<string, unknown>;
  };
}

export interface Rule<R = NodeRequest> {
  /** How the guide names the request. */
  name: string;
  by: 'user' | 'gateway' | 'build' | 'reconcile loop' | 'rollout' | 'webhook delivery' | 'auto-unlock' | 'restore' | 'export';
  checks: Check<R>[];
  /** What an accepted request changes... */
  change: NodeChange;
  /** ...and what it changes that depends on the request (versions, settings), said in words for the guide. */
  changeFrom?: { describe: string; of: (j: Judged<R>) => NodeChange };
  /** The build that carries the change out, enqueued in the same transaction. */
  build?: BuildAction;
  /** The request makes the node: there is no status before it (create). */
  makesNode?: true;
}
