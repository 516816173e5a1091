// The checks the lifecycle table (../lifecycle.ts) shares between its rules, and the longer lists
// of some rules (upgrades, the authentication restart, a create). A check that holds decides: the
// request is refused with its 409 (or left as it is). Pure, no I/O.
import type { NodeStatus } from '../../domain/nodes.ts';
import { planLimitRefusal } from '../../domain/plan-limits.ts';
import type { Check, CreationFacts, Judged, RequestOf } from './requests.ts';

// Compile-time complete: a new NodeStatus that is missing here fails the type check.
const IN_ORDER = { STARTING: 0, RUNNING: 1, IN_PROGRESS: 2, PAUSED: 3, FAILED: 4, STORAGE_LOST: 5, EXPORTED: 6, DESTROYING: 7, DESTROYED: 8 } satisfies Record<NodeStatus, number>;
export const EVERY_STATUS = Object.keys(IN_ORDER) as NodeStatus[];

export const withStatus = ({ node }: Judged<unknown>) => ({ status: node.status });

// A destroyed (or destroying) node is final: whatever else holds, this is the answer, so this
// check comes first everywhere it appears.
export const destroyedNode: Check = {
  statuses: ['DESTROYING', 'DESTROYED'],
  refusal: { code: 'node_destroyed', message: ({ node }) => `node ${node.id} is ${node.status}`, details: withStatus },
};

// A node has at most one build in progress: builds of the same node never race each other.
export const buildRunning: Check = {
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
export const supersededNode: Check = {
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
export const exportedNode: Check = {
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
export const stillExported: Check = { statuses: ['EXPORTED'] };

// The node's volume is gone: starting, stopping or upgrading it would bring a daemon up on an empty
// volume unannounced (or hide that it has none). Only a recover (a fresh volume, on purpose, the
// customer then initialising it with their mnemonic) or a destroy moves it on.
export const storageLostNode: Check = {
  statuses: ['STORAGE_LOST'],
  refusal: {
    code: 'node_storage_lost',
    message: ({ node }) => `node ${node.id} lost its storage; recover it (POST /api/nodes/${node.id}/recover) or destroy it`,
    details: withStatus,
  },
};

export const upgradeChecks: Check<RequestOf<'upgrade' | 'rolloutUpgrade'>>[] = [
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
export const authenticationRestartChecks: Check<RequestOf<'authenticationRestart'>>[] = [
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

export const creationChecks: Check<RequestOf<'create'>>[] = [
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
