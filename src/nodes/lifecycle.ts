// The node lifecycle in one table: every request users and the system make of a node, the checks
// that refuse it (with the 409 a user gets) or leave the node as it is, what it changes and the
// build that carries it out. Pure, no I/O: a caller locks the node's row, asks decide(), and
// carries the answer out in the same transaction with applyDecision / changeNodes (transition.ts),
// enqueueing the build if there is one. The lifecycle table of docs/API.md is rendered from this one
// (readme/lifecycle-table.ts), so adding a status or a request happens here and nowhere else.
// What it is made of lives beside it: the requests, checks and rules (lifecycle/requests.ts) and
// the checks several rules share (lifecycle/checks.ts).
import type { Node } from '../domain/nodes.ts';
import { AppError } from '../errors.ts';
import type { BuildInProgress, Check, Decision, Judged, LifecycleNode, NodeRequest, Refusal, RequestOf, RequestType, Rule } from './lifecycle/requests.ts';
import { authenticationRestartChecks, buildRunning, creationChecks, destroyedNode, EVERY_STATUS, exportedNode, stillExported, storageLostNode, supersededNode, upgradeChecks, withStatus } from './lifecycle/checks.ts';

export type { BuildInProgress, Check, CreationFacts, Decision, LifecycleNode, NodeRequest, Refusal, RefusalCode, RequestType, Rule } from './lifecycle/requests.ts';
export { EVERY_STATUS, supersededByCreation } from './lifecycle/checks.ts';

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
