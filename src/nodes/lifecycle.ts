// The node lifecycle in one table: every request users and the system make of a node, the checks
// that refuse it (with the 409 a user gets) or leave the node as it is, what it changes and the
// build that carries it out. Pure, no I/O: a caller locks the node's row, asks decide(), and
// carries the answer out in the same transaction with applyDecision / changeNodes (transition.ts),
// enqueueing the build if there is one. The lifecycle table of docs/API.md is rendered from this one
// (readme/lifecycle-table.ts), so adding a status or a request happens here and nowhere else.
import type { Build, BuildAction, NodeStatus, Node } from '../domain/nodes.ts';
import { planLimitRefusal } from '../domain/plan-limits.ts';
import type { PlanDefinition } from '../domain/plans.ts';
import { AppError, type ErrorCode } from '../errors.ts';
import type { NodeChange } from './transition.ts';
import type { RestoreChoices, RestoreFence } from './restore/restore-fence.ts';
import type { NodePorts } from '../runtime/types.ts';

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
type RequestOf<T extends RequestType> = Extract<NodeRequest, { type: T }>;

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

interface Judged<R> {
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

// Compile-time complete: a new NodeStatus that is missing here fails the type check.
const IN_ORDER = { STARTING: 0, RUNNING: 1, IN_PROGRESS: 2, PAUSED: 3, FAILED: 4, STORAGE_LOST: 5, EXPORTED: 6, DESTROYING: 7, DESTROYED: 8 } satisfies Record<NodeStatus, number>;
export const EVERY_STATUS = Object.keys(IN_ORDER) as NodeStatus[];

const withStatus = ({ node }: Judged<unknown>) => ({ status: node.status });

// A destroyed (or destroying) node is final: whatever else holds, this is the answer, so this
// check comes first everywhere it appears.
const destroyedNode: Check = {
  statuses: ['DESTROYING', 'DESTROYED'],
  refusal: { code: 'node_destroyed', message: ({ node }) => `node ${node.id} is ${node.status}`, details: withStatus },
};

// A node has at most one build in progress: builds of the same node never race each other.
const buildRunning: Check = {
  when: 'a build is in progress',
  holds: ({ build }) => build !== undefined,
  refusal: {
    code: 'build_in_progress',
    message: ({ node, build }) =>
      `node ${node.id} has a build in progress (#${build!.buildNumber}, ${build!.action}); try again when it completes`,
    details: ({ build }) => ({ buildNumber: build!.buildNumber, action: build!.action }),
  },
};

// A restore of this node's wallet went into another node (backups: one live copy of a wallet). Its
// copy has moved the channels on since, so this node's state is stale: started again, it would
// broadcast revoked states and the channels' peers would take the funds. It stays stopped for good;
// only destroy is left.
const supersededNode: Check = {
  when: 'superseded by a restore of its wallet',
  holds: ({ node }) => node.supersededBy !== null,
  refusal: {
    code: 'node_superseded',
    message: ({ node }) =>
      `node ${node.id} was superseded by node ${node.supersededBy}, into which its wallet was restored: two live copies of one ` +
      'Lightning wallet lose funds (an old channel state gets broadcast and penalised), so it never runs again; destroy it',
    details: ({ node }) => ({ supersededBy: node.supersededBy }),
  },
};

// The node's wallet left with its owner (an export): the customer's copy is the only live one, so
// this node never runs, unlocks or takes a wallet here again; like a superseded node, only destroy
// is left. Status EXPORTED says it for good.
const exportedNode: Check = {
  statuses: ['EXPORTED'],
  refusal: {
    code: 'node_exported',
    message: ({ node }) =>
      `node ${node.id} was exported: its wallet left with its owner's final backup, and two live copies of one Lightning wallet ` +
      'lose funds (an old channel state gets broadcast and penalised), so it never runs here again; destroy it',
    details: withStatus,
  },
};

// A build that began before an export's backup was stored (a stop or an upgrade asked for while it
// ran) ends without bringing the node back: it stays EXPORTED, and a daemon the build left up is
// stopped by the reconcile loop.
const stillExported: Check = { statuses: ['EXPORTED'] };

// The node's volume is gone: starting, stopping or upgrading it would bring a daemon up on an empty
// volume unannounced (or hide that it has none). Only a recover (a fresh volume, on purpose, the
// customer then initialising it with their mnemonic) or a destroy moves it on.
const storageLostNode: Check = {
  statuses: ['STORAGE_LOST'],
  refusal: {
    code: 'node_storage_lost',
    message: ({ node }) => `node ${node.id} lost its storage; recover it (POST /api/nodes/${node.id}/recover) or destroy it`,
    details: withStatus,
  },
};

const upgradeChecks: Check<RequestOf<'upgrade' | 'rolloutUpgrade'>>[] = [
  destroyedNode,
  exportedNode,
  supersededNode,
  buildRunning,
  storageLostNode,
  {
    when: 'already on the target version',
    holds: ({ request, node }) => !request.toVersion || request.toVersion === node.imageVersion,
    refusal: {
      code: 'nothing_to_upgrade',
      message: ({ node }) => `node ${node.id} already runs the latest image version ${node.imageVersion}`,
      details: ({ node }) => ({ version: node.imageVersion }),
    },
  },
  // A paused node takes the upgrade at its next start (startNode applies the latest version).
  {
    statuses: ['PAUSED'],
    refusal: { code: 'node_not_running', message: ({ node }) => `node ${node.id} is PAUSED; start it, then upgrade it`, details: withStatus },
  },
];

// Only a running daemon needs restarting: any other node's next start runs with authentication.
const authenticationRestartChecks: Check<RequestOf<'authenticationRestart'>>[] = [
  destroyedNode,
  exportedNode,
  supersededNode,
  buildRunning,
  storageLostNode,
  {
    statuses: ['STARTING', 'IN_PROGRESS', 'PAUSED', 'FAILED'],
    refusal: {
      code: 'node_not_running',
      message: ({ node }) => `node ${node.id} is ${node.status}: its daemon starts with authentication at its next start`,
      details: withStatus,
    },
  },
];

type Creation = Judged<RequestOf<'create'>>;
const restoreOf = ({ request }: Creation) => request.facts.restore;
/** The live node a restore supersedes, when the user chose to rather than be refused. */
export const supersededByCreation = (facts: CreationFacts) => (facts.restore?.choices.supersedeSource ? facts.restore.fence.live : undefined);
/** The plan's refusal of one more node; a restore that supersedes one of the account's nodes replaces it, so the count stays. */
const nodeLimitRefusal = ({ request: { facts } }: Creation) =>
  facts.plan?.plan ? planLimitRefusal(facts.plan.plan, 'nodes', facts.plan.liveNodes - (supersededByCreation(facts)?.userId === facts.userId ? 1 : 0)) : undefined;

const creationChecks: Check<RequestOf<'create'>>[] = [
  // Never holds for a node that does not exist yet; kept so that every request beginning a build
  // is refused while one runs, whichever it is (a node has one build at a time).
  buildRunning as Check<RequestOf<'create'>>,
  {
    when: 'no image version was released yet',
    holds: ({ request }) => request.facts.release === null,
    refusal: { code: 'service_unavailable', message: () => 'no image version has been released yet' },
  },
  {
    when: 'no free ports are left',
    holds: ({ request }) => request.facts.ports === null,
    refusal: { code: 'no_ports_available', message: () => 'no free ports are left for a new node (NODE_PORT_RANGE, or K8S_PEER_PORT_RANGE with HostPort peers)' },
  },
  // One live copy of a wallet (restore/restore-fence.ts says why each holds).
  {
    when: "a restore of an exported node's wallet",
    holds: (j) => restoreOf(j)?.fence.exported === true,
    refusal: {
      code: 'wallet_exported',
      message: (j) =>
        `backup ${restoreOf(j)!.fence.backupId} holds the wallet of node ${restoreOf(j)!.fence.sourceId}, which was exported: that wallet left with its owner's final backup and ` +
        'lives only in their copy now; restoring it here would make two live copies of one Lightning wallet, which lose funds',
      details: (j) => ({ sourceNodeId: restoreOf(j)!.fence.sourceId }),
    },
  },
  {
    when: 'a restore of a backup older than its wallet\'s newest, not confirmed',
    holds: (j) => restoreOf(j)?.fence.newer !== undefined && !restoreOf(j)!.choices.confirmOlderBackup,
    refusal: {
      code: 'backup_older_than_source',
      message: (j) => {
        const { backupId, newer } = restoreOf(j)!.fence;
        return (
          `backup ${backupId} is older than the newest successful backup of its wallet (${newer!.id} of node ${newer!.nodeId}, made ` +
          `${newer!.at.toISOString()}): an older backup holds older channel states, and a node that broadcasts one loses the ` +
          'channel\'s funds to the peer. Restore the newest backup, or pass restore.confirmOlderBackup: true if you know the channels are safe'
        );
      },
      details: (j) => {
        const newer = restoreOf(j)!.fence.newer!;
        return { newestBackupId: newer.id, newestBackupNodeId: newer.nodeId, newestBackupAt: newer.at.toISOString() };
      },
    },
  },
  {
    when: 'a restore of a wallet another node still holds, without superseding it',
    holds: (j) => restoreOf(j)?.fence.live !== undefined && !restoreOf(j)!.choices.supersedeSource,
    refusal: {
      code: 'source_node_live',
      message: (j) => {
        const { backupId, live } = restoreOf(j)!.fence;
        return (
          `backup ${backupId} holds the wallet of node ${live!.id} (${live!.name}, ${live!.status}), which still exists: two live copies ` +
          'of one Lightning wallet will broadcast an old channel state and lose the funds. Destroy node ' +
          `${live!.id} first, or pass restore.supersedeSource: true to stop it and keep it from ever starting again`
        );
      },
      details: (j) => {
        const live = restoreOf(j)!.fence.live!;
        return { sourceNodeId: live.id, status: live.status, options: ['destroy the source node', 'restore.supersedeSource: true'] };
      },
    },
  },
  {
    when: "the account's plan has no room for another node",
    holds: (j) => nodeLimitRefusal(j) !== undefined,
    refusal: { code: 'plan_limit_reached', message: (j) => nodeLimitRefusal(j)!.message, details: (j) => nodeLimitRefusal(j)!.details },
  },
];

export const LIFECYCLE: { [T in RequestType]: Rule<RequestOf<T>> } = {
  create: {
    name: 'create',
    by: 'user',
    checks: creationChecks,
    // The daemon starts at once and, like every daemon start, locked; it has no wallet yet.
    change: { status: 'STARTING', desiredState: 'running', locked: true, initialized: false },
    build: 'create',
    makesNode: true,
  },
  start: {
    name: 'start',
    by: 'user',
    checks: [
      destroyedNode,
      exportedNode,
      supersededNode,
      buildRunning,
      storageLostNode,
      {
        statuses: ['RUNNING'],
        refusal: { code: 'already_running', message: ({ node }) => `node ${node.id} is already running`, details: withStatus },
      },
    ],
    // Every daemon start begins locked (RLN semantics).
    change: { status: 'STARTING', desiredState: 'running', locked: true },
    build: 'start',
  },
  stop: {
    name: 'stop',
    by: 'user',
    checks: [
      destroyedNode,
      exportedNode,
      // Its daemon is stopped already (the reconcile loop stops it); a stop would make it PAUSED and
      // a later start would bring it up on an empty volume.
      buildRunning,
      storageLostNode,
      {
        statuses: ['PAUSED'],
        refusal: { code: 'already_stopped', message: ({ node }) => `node ${node.id} is already stopped`, details: withStatus },
      },
    ],
    // The status stays until the stop build has stopped the daemon.
    change: { desiredState: 'stopped' },
    build: 'stop',
  },
  upgrade: { name: 'upgrade', by: 'user', checks: upgradeChecks, change: { status: 'IN_PROGRESS', locked: true }, build: 'upgrade' },
  destroy: {
    name: 'destroy',
    by: 'user',
    checks: [
      {
        ...destroyedNode,
        refusal: { ...destroyedNode.refusal!, message: ({ node }) => `node ${node.id} is already ${node.status}` },
      },
      buildRunning,
    ],
    // The sealed password goes at once: a destroyed node has nothing left to unlock.
    change: { status: 'DESTROYING', desiredState: 'destroyed', autoUnlockSealed: null },
    build: 'destroy',
  },
  updateSettings: {
    name: 'update settings',
    by: 'user',
    checks: [
      destroyedNode,
      {
        when: 'no webhookUrl or continuousState in the request',
        holds: ({ request }) => request.webhookUrl === undefined && request.continuousState === undefined,
      },
    ],
    change: {},
    changeFrom: {
      describe: 'webhookUrl set or removed; continuousState from the next daemon start',
      of: ({ request, node }) => {
        const continuous = request.continuousState === undefined ? {} : { continuousState: request.continuousState };
        if (request.webhookUrl === undefined) return continuous;
        const { webhookUrl: _previous, ...rest } = node.settings;
        return { ...continuous, settings: request.webhookUrl === null ? rest : { ...rest, webhookUrl: request.webhookUrl } };
      },
    },
  },
  enableAutoUnlock: {
    name: 'turn auto-unlock on',
    by: 'user',
    checks: [
      destroyedNode,
      exportedNode,
      supersededNode,
      // The password is checked against the running daemon before it is stored.
      {
        statuses: ['STARTING', 'IN_PROGRESS', 'PAUSED', 'FAILED', 'STORAGE_LOST'],
        refusal: {
          code: 'node_not_running',
          message: ({ node }) => `node ${node.id} is ${node.status}: the password is checked against the running node; turn auto-unlock on once it is RUNNING`,
          details: withStatus,
        },
      },
    ],
    change: {},
    changeFrom: { describe: 'auto-unlock on: the password, sealed', of: ({ request }) => ({ autoUnlockSealed: request.sealed }) },
  },
  disableAutoUnlock: {
    name: 'turn auto-unlock off',
    by: 'user',
    checks: [{ when: 'auto-unlock is off', holds: ({ node }) => node.autoUnlockSealed === null }],
    change: { autoUnlockSealed: null },
  },
  /**
   * Judged when the export's final backup is asked for; nothing changes until it succeeds
   * (exportCompleted). RLN backs up only a running daemon's initialised wallet.
   */
  export: {
    name: 'export',
    by: 'user',
    checks: [
      destroyedNode,
      exportedNode,
      supersededNode,
      buildRunning,
      {
        statuses: ['STARTING', 'IN_PROGRESS', 'PAUSED', 'FAILED', 'STORAGE_LOST'],
        refusal: { code: 'node_not_running', message: ({ node }) => `node ${node.id} is ${node.status}; an export backs it up, which needs it RUNNING`, details: withStatus },
      },
      {
        when: 'being stopped',
        holds: ({ node }) => node.desiredState !== 'running',
        refusal: { code: 'node_not_running', message: ({ node }) => `node ${node.id} is being stopped; an export backs it up, which needs it RUNNING`, details: withStatus },
      },
      {
        when: 'no wallet yet',
        holds: ({ node }) => !node.initialized,
        refusal: {
          code: 'node_not_initialized',
          message: ({ node }) => `node ${node.id} has no wallet yet: there is nothing to export`,
          details: withStatus,
        },
      },
    ],
    change: {},
  },
  /**
   * The final backup is stored: the node stops for good (the reconcile loop stops a daemon that
   * should not run), stays locked, and the sealed password goes (nothing here unlocks it again).
   * A node destroyed or superseded meanwhile stays as it is.
   */
  exportCompleted: {
    name: 'export backup succeeded',
    by: 'export',
    checks: [{ statuses: ['DESTROYING', 'DESTROYED'] }, { when: 'superseded meanwhile', holds: ({ node }) => node.supersededBy !== null }],
    change: { status: 'EXPORTED', desiredState: 'stopped', locked: true, autoUnlockSealed: null },
  },
  /**
   * Anything that reaches the node's daemon (the gateways' calls, the management API's unlock and
   * init) asks this first: the daemon answers only while the node is RUNNING, and a superseded or
   * exported node's daemon is never called again. Changes nothing.
   */
  callDaemon: {
    name: 'a call to the daemon',
    by: 'gateway',
    checks: [
      // Stopping already (its stop build may not have run yet): nothing more reaches its daemon.
      supersededNode,
      exportedNode,
      {
        statuses: ['STARTING', 'IN_PROGRESS', 'PAUSED', 'FAILED', 'STORAGE_LOST', 'DESTROYING', 'DESTROYED'],
        refusal: { code: 'node_not_running', message: ({ node }) => `node ${node.id} is ${node.status}, not RUNNING`, details: withStatus },
      },
    ],
    change: {},
  },
  markUnlocked: {
    name: 'unlock accepted',
    by: 'gateway',
    checks: [{ statuses: EVERY_STATUS.filter((s) => s !== 'RUNNING') }, { when: 'unlocked', holds: ({ node }) => !node.locked }],
    change: { locked: false },
  },
  markLocked: { name: 'lock accepted', by: 'gateway', checks: [{ when: 'locked', holds: ({ node }) => node.locked }], change: { locked: true } },
  markInitialized: {
    name: 'init accepted',
    by: 'gateway',
    checks: [{ when: 'initialized', holds: ({ node }) => node.initialized }],
    change: { initialized: true },
  },
  startBuildSucceeded: {
    name: 'create, start or upgrade build succeeded',
    by: 'build',
    checks: [stillExported],
    change: { status: 'RUNNING', locked: true },
    changeFrom: {
      describe: "the build's image version; the peer address the runtime gave",
      of: ({ request }) => ({
        ...(request.imageVersion === undefined ? {} : { imageVersion: request.imageVersion }),
        ...(request.peer === undefined ? {} : { peerHost: request.peer.host, peerPort: request.peer.port }),
      }),
    },
  },
  stopBuildSucceeded: { name: 'stop build succeeded', by: 'build', checks: [stillExported], change: { status: 'PAUSED' } },
  destroyBuildSucceeded: { name: 'destroy build succeeded', by: 'build', checks: [], change: { status: 'DESTROYED', destroyed: true } },
  upgradeRolledBack: {
    name: 'upgrade rolled back',
    by: 'build',
    checks: [stillExported],
    change: { status: 'RUNNING', locked: true },
    changeFrom: { describe: 'the previous image version', of: ({ request }) => ({ imageVersion: request.imageVersion }) },
  },
  // A build that gave up, or an upgrade whose rollback failed too.
  buildFailed: { name: 'build failed', by: 'build', checks: [stillExported], change: { status: 'FAILED' } },
  daemonRestarted: { name: 'daemon restarted', by: 'reconcile loop', checks: [], change: { locked: true } },
  /**
   * A restore of this node's backup went into node `by` (backups/service.ts): the node is stopped
   * (a stop build, unless it is stopped already) and fenced for good.
   */
  supersede: {
    name: 'superseded by a restore',
    by: 'restore',
    checks: [
      destroyedNode,
      exportedNode,
      // The restore waits for the node's build rather than race it.
      buildRunning,
    ],
    change: { desiredState: 'stopped' },
    changeFrom: { describe: 'supersededBy: the restored node', of: ({ request }) => ({ supersededBy: request.by }) },
    build: 'stop',
  },
  // The rollout skips a node refused for any other reason, and defers a PAUSED one to its next start.
  rolloutUpgrade: { name: 'rollout upgrade', by: 'rollout', checks: upgradeChecks, change: { status: 'IN_PROGRESS', locked: true }, build: 'upgrade' },
  // The daemon stopped and started again on the same version and volume, now with --root-public-key.
  authenticationRestart: {
    name: 'authentication restart',
    by: 'rollout',
    checks: authenticationRestartChecks,
    change: { status: 'IN_PROGRESS', locked: true },
    build: 'restart',
  },
  webhookGone: {
    name: 'webhook answered 410',
    by: 'webhook delivery',
    checks: [{ when: 'its webhook URL is another one', holds: ({ request, node }) => node.settings.webhookUrl !== request.url }],
    change: {},
    changeFrom: {
      describe: 'webhookUrl removed',
      of: ({ node }) => {
        const { webhookUrl: _removed, ...rest } = node.settings;
        return { settings: rest };
      },
    },
  },
  // The password was changed on the node, the seal no longer opens, ...: off, with an event.
  autoUnlockFailed: {
    name: 'auto-unlock failed for good',
    by: 'auto-unlock',
    checks: [
      {
        when: 'auto-unlock was turned off or given another password meanwhile',
        holds: ({ request, node }) => node.autoUnlockSealed !== request.sealed,
      },
    ],
    change: { autoUnlockSealed: null },
  },
  /**
   * The node's volume is gone (process: its storage directory; Kubernetes: its claim or volume), or
   * its daemon, initialised before, answers as never initialised (nodes/health/storage-lost.ts). Its daemon,
   * if one still runs, is stopped (daemonShouldRun is false) and it stays locked until a recover.
   * A pod waiting to be scheduled is not this: the volume is asked about, not the pod.
   */
  storageLost: {
    name: 'storage found lost',
    by: 'reconcile loop',
    checks: [
      { statuses: ['STORAGE_LOST', 'EXPORTED', 'DESTROYING', 'DESTROYED'] },
      { when: 'superseded', holds: ({ node }) => node.supersededBy !== null },
      // A build moves the node's daemon and volume itself (a recover makes the new volume): it is
      // judged again after the build.
      { when: 'a build is in progress', holds: ({ build }) => build !== undefined },
    ],
    change: { status: 'STORAGE_LOST', locked: true },
  },
  /**
   * A fresh, empty volume: the recover build stops the old daemon and waits until it is gone, removes
   * what is left of the old volume, and starts the daemon on a new one (never two live writers). The
   * node comes up not initialised: its owner initialises it with their mnemonic (POST /init through
   * the node path) and unlocks it. The sealed password goes: it belonged to the wallet that was lost.
   */
  recover: {
    name: 'recover',
    by: 'user',
    checks: [
      destroyedNode,
      exportedNode,
      supersededNode,
      buildRunning,
      {
        statuses: ['STARTING', 'RUNNING', 'IN_PROGRESS', 'PAUSED', 'FAILED'],
        refusal: {
          code: 'storage_not_lost',
          message: ({ node }) => `node ${node.id} is ${node.status}: only a node whose storage was lost (STORAGE_LOST) is recovered`,
          details: withStatus,
        },
      },
    ],
    change: { status: 'STARTING', desiredState: 'running', locked: true, initialized: false, autoUnlockSealed: null },
    build: 'recover',
  },
};

export const REQUEST_TYPES = Object.keys(LIFECYCLE) as RequestType[];

const ruleOf = (type: RequestType) => LIFECYCLE[type] as Rule<NodeRequest>;

/** What the lifecycle table says to `request` on `node` (with the build it has in progress, if any). */
export function decide(request: RequestOf<'create'>): Decision;
export function decide(request: NodeRequest, node: LifecycleNode, build?: BuildInProgress): Decision;
export function decide(request: NodeRequest, node?: LifecycleNode, build?: BuildInProgress): Decision {
  const rule = ruleOf(request.type);
  // Only a create comes without a node, and its checks look at the build alone.
  const judged: Judged<NodeRequest> = { request, node: node!, build };
  for (const check of rule.checks) {
    const holds = check.statuses ? check.statuses.includes(judged.node.status) : check.holds!(judged);
    if (!holds) continue;
    if (!check.refusal) return { outcome: 'no change' };
    const { code, message, details } = check.refusal;
    return { outcome: 'refused', refusal: details ? { code, message: message(judged), details: details(judged) } : { code, message: message(judged) } };
  }
  const change = { ...rule.change, ...rule.changeFrom?.of(judged) };
  return rule.build ? { outcome: 'change', change, build: rule.build } : { outcome: 'change', change };
}

/** Whether decide() needs the node's build in progress to judge this request (one query fewer when not). */
export const refusedWhileBuilding = (type: RequestType) => ruleOf(type).checks.includes(buildRunning);

export const refusalError = (r: Refusal) => new AppError(r.code, r.message, r.details);

/** Throws the 409 of a node whose daemon may not be called now (the callDaemon rule). */
export function requireDaemonCallable(node: LifecycleNode) {
  const decision = decide({ type: 'callDaemon' }, node);
  if (decision.outcome === 'refused') throw refusalError(decision.refusal);
}

/** Whether the node's daemon should be running now (what the reconcile loop keeps true). */
export const daemonShouldRun = (node: Pick<Node, 'status' | 'desiredState'> & Partial<Pick<Node, 'supersededBy'>>) =>
  node.desiredState === 'running' && node.status === 'RUNNING' && !node.supersededBy;
