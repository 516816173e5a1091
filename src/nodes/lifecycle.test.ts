// The lifecycle table on its own: every request in every status, then each condition that is not
// a status (a build in progress, versions, lock and init flags, webhook URLs), the exact 409
// codes, messages and details, and the changes and builds accepted requests make.
import { describe, expect, it } from 'vitest';
import type { Node, NodeStatus } from '../domain/nodes.ts';
import type { PlanDefinition } from '../domain/plans.ts';
import type { RestoreFence } from './restore/restore-fence.ts';
import { ERROR_STATUS } from '../errors.ts';
import {
  EVERY_STATUS,
  LIFECYCLE,
  REQUEST_TYPES,
  daemonShouldRun,
  decide,
  refusalError,
  refusedWhileBuilding,
  supersededByCreation,
  type BuildInProgress,
  type CreationFacts,
  type LifecycleNode,
  type NodeRequest,
  type RequestType,
} from './lifecycle.ts';

const HOOK = 'https://hooks.example/a';

/** A create the service can carry out: a release, free ports, no plan limit. */
const CREATABLE: CreationFacts = { userId: 'u1', release: 'v1', ports: { restPort: 3001, peerPort: 9735 }, plan: { plan: null, liveNodes: 0 } };

const nodeIn = (status: NodeStatus, more: Partial<LifecycleNode> = {}): LifecycleNode => ({
  id: 'n1',
  status,
  locked: true,
  initialized: false,
  desiredState: 'running',
  imageVersion: 'v1',
  settings: { webhookUrl: HOOK },
  autoUnlockSealed: null,
  supersededBy: null,
  ...more,
});

/** What decide() answers, in one word: 'change', 'none' (nothing to change) or the refusal's code. */
const verdict = (request: NodeRequest, node: LifecycleNode, build?: BuildInProgress) => {
  const d = decide(request, node, build);
  return d.outcome === 'change' ? 'change' : d.outcome === 'refused' ? d.refusal.code : 'none';
};

// Statuses in this order: STARTING RUNNING IN_PROGRESS PAUSED FAILED STORAGE_LOST EXPORTED DESTROYING DESTROYED.
// No build in progress, a newer version to upgrade to, the node locked, not initialized, with a webhook URL.
const MATRIX: Array<{ request: NodeRequest; node?: Partial<LifecycleNode>; expect: string }> = [
  { request: { type: 'create', facts: CREATABLE }, expect: 'change change change change change change change change change' },
  { request: { type: 'start' }, expect: 'change already_running change change change node_storage_lost node_exported node_destroyed node_destroyed' },
  { request: { type: 'stop' }, expect: 'change change change already_stopped change node_storage_lost node_exported node_destroyed node_destroyed' },
  { request: { type: 'upgrade', toVersion: 'v2' }, expect: 'change change change node_not_running change node_storage_lost node_exported node_destroyed node_destroyed' },
  { request: { type: 'destroy' }, expect: 'change change change change change change change node_destroyed node_destroyed' },
  { request: { type: 'updateSettings', webhookUrl: 'https://hooks.example/b' }, expect: 'change change change change change change change node_destroyed node_destroyed' },
  { request: { type: 'callDaemon' }, expect: 'node_not_running change node_not_running node_not_running node_not_running node_not_running node_exported node_not_running node_not_running' },
  { request: { type: 'markUnlocked' }, expect: 'none change none none none none none none none' },
  { request: { type: 'markLocked' }, node: { locked: false }, expect: 'change change change change change change change change change' },
  { request: { type: 'markInitialized' }, expect: 'change change change change change change change change change' },
  { request: { type: 'startBuildSucceeded' }, expect: 'change change change change change change none change change' },
  { request: { type: 'stopBuildSucceeded' }, expect: 'change change change change change change none change change' },
  { request: { type: 'destroyBuildSucceeded' }, expect: 'change change change change change change change change change' },
  { request: { type: 'upgradeRolledBack', imageVersion: 'v0' }, expect: 'change change change change change change none change change' },
  { request: { type: 'buildFailed' }, expect: 'change change change change change change none change change' },
  { request: { type: 'supersede', by: 'n2' }, expect: 'change change change change change change node_exported node_destroyed node_destroyed' },
  { request: { type: 'daemonRestarted' }, expect: 'change change change change change change change change change' },
  { request: { type: 'rolloutUpgrade', toVersion: 'v2' }, expect: 'change change change node_not_running change node_storage_lost node_exported node_destroyed node_destroyed' },
  { request: { type: 'authenticationRestart' }, expect: 'node_not_running change node_not_running node_not_running node_not_running node_storage_lost node_exported node_destroyed node_destroyed' },
  { request: { type: 'webhookGone', url: HOOK }, expect: 'change change change change change change change change change' },
  { request: { type: 'enableAutoUnlock', sealed: 'S' }, expect: 'node_not_running change node_not_running node_not_running node_not_running node_not_running node_exported node_destroyed node_destroyed' },
  { request: { type: 'disableAutoUnlock' }, node: { autoUnlockSealed: 'S' }, expect: 'change change change change change change change change change' },
  { request: { type: 'autoUnlockFailed', sealed: 'S' }, node: { autoUnlockSealed: 'S' }, expect: 'change change change change change change change change change' },
  { request: { type: 'export' }, node: { initialized: true }, expect: 'node_not_running change node_not_running node_not_running node_not_running node_not_running node_exported node_destroyed node_destroyed' },
  { request: { type: 'exportCompleted' }, expect: 'change change change change change change change none none' },
  { request: { type: 'storageLost' }, expect: 'change change change change change none none none none' },
  { request: { type: 'recover' }, expect: 'storage_not_lost storage_not_lost storage_not_lost storage_not_lost storage_not_lost change node_exported node_destroyed node_destroyed' },
];

describe('the lifecycle table', () => {
  it('covers every request once in the matrix below', () => {
    expect(MATRIX.map((m) => m.request.type).sort()).toEqual([...REQUEST_TYPES].sort());
    expect(EVERY_STATUS).toEqual(['STARTING', 'RUNNING', 'IN_PROGRESS', 'PAUSED', 'FAILED', 'STORAGE_LOST', 'EXPORTED', 'DESTROYING', 'DESTROYED']);
  });

  for (const { request, node, expect: row } of MATRIX) {
    it(`${request.type} in every status`, () => {
      const got = EVERY_STATUS.map((s) => verdict(request, nodeIn(s, node)));
      expect(got.join(' ')).toBe(row);
    });
  }

  describe('while a build is in progress', () => {
    const build: BuildInProgress = { buildNumber: 3, action: 'stop' };
    const building: RequestType[] = ['create', 'start', 'stop', 'upgrade', 'destroy', 'rolloutUpgrade', 'supersede', 'recover', 'authenticationRestart'];
    // An export begins a backup, not a build, but waits for the node's build all the same.
    const waitsForBuild: RequestType[] = [...building, 'export'];
    const requests: Record<RequestType, NodeRequest> = Object.fromEntries(MATRIX.map((m) => [m.request.type, m.request])) as never;

    it('refuses exactly the requests that begin a build, in every live status', () => {
      for (const type of REQUEST_TYPES) {
        expect(refusedWhileBuilding(type), type).toBe(waitsForBuild.includes(type));
        expect(LIFECYCLE[type].build !== undefined, type).toBe(building.includes(type));
        // An exported node refuses them all with node_exported first (tested below).
        for (const status of EVERY_STATUS.filter((s) => s !== 'DESTROYING' && s !== 'DESTROYED' && s !== 'EXPORTED')) {
          const got = verdict(requests[type], nodeIn(status, type === 'markLocked' ? { locked: false } : {}), build);
          if (waitsForBuild.includes(type)) expect(got, `${type} in ${status}`).toBe('build_in_progress');
          else expect(got, `${type} in ${status}`).not.toBe('build_in_progress');
        }
      }
    });

    it('says which build, after node_destroyed and before the status refusals', () => {
      expect(decide({ type: 'start' }, nodeIn('RUNNING'), build)).toEqual({
        outcome: 'refused',
        refusal: {
          code: 'build_in_progress',
          message: 'node n1 has a build in progress (#3, stop); try again when it completes',
          details: { buildNumber: 3, action: 'stop' },
        },
      });
      expect(verdict({ type: 'stop' }, nodeIn('PAUSED'), build)).toBe('build_in_progress');
      expect(verdict({ type: 'upgrade', toVersion: 'v1' }, nodeIn('RUNNING'), build)).toBe('build_in_progress');
      expect(verdict({ type: 'destroy' }, nodeIn('DESTROYING'), build)).toBe('node_destroyed');
    });
  });

  describe('upgrades', () => {
    it('refuse nothing_to_upgrade on the target version or without a release, before node_not_running', () => {
      const refusal = { code: 'nothing_to_upgrade', message: 'node n1 already runs the latest image version v1', details: { version: 'v1' } };
      expect(decide({ type: 'upgrade', toVersion: 'v1' }, nodeIn('RUNNING'))).toEqual({ outcome: 'refused', refusal });
      expect(decide({ type: 'upgrade', toVersion: undefined }, nodeIn('FAILED'))).toEqual({ outcome: 'refused', refusal });
      expect(verdict({ type: 'upgrade', toVersion: 'v1' }, nodeIn('PAUSED'))).toBe('nothing_to_upgrade');
      expect(verdict({ type: 'rolloutUpgrade', toVersion: 'v1' }, nodeIn('PAUSED'))).toBe('nothing_to_upgrade');
      expect(verdict({ type: 'upgrade', toVersion: 'v1' }, nodeIn('DESTROYED'))).toBe('node_destroyed');
    });

    it('make the node IN_PROGRESS and locked, with an upgrade build', () => {
      const accepted = { outcome: 'change', change: { status: 'IN_PROGRESS', locked: true }, build: 'upgrade' };
      expect(decide({ type: 'upgrade', toVersion: 'v2' }, nodeIn('RUNNING', { locked: false }))).toEqual(accepted);
      expect(decide({ type: 'rolloutUpgrade', toVersion: 'v2' }, nodeIn('FAILED'))).toEqual(accepted);
    });
  });

  it('refuses with the messages and details users see', () => {
    const refusal = (request: NodeRequest, node: LifecycleNode) => {
      const d = decide(request, node);
      if (d.outcome !== 'refused') throw new Error(`${request.type} was not refused`);
      return d.refusal;
    };
    expect(refusal({ type: 'start' }, nodeIn('RUNNING'))).toEqual({ code: 'already_running', message: 'node n1 is already running', details: { status: 'RUNNING' } });
    expect(refusal({ type: 'stop' }, nodeIn('PAUSED'))).toEqual({ code: 'already_stopped', message: 'node n1 is already stopped', details: { status: 'PAUSED' } });
    expect(refusal({ type: 'upgrade', toVersion: 'v2' }, nodeIn('PAUSED'))).toEqual({
      code: 'node_not_running',
      message: 'node n1 is PAUSED; start it, then upgrade it',
      details: { status: 'PAUSED' },
    });
    for (const status of ['DESTROYING', 'DESTROYED'] as const) {
      for (const request of [{ type: 'start' }, { type: 'stop' }, { type: 'upgrade', toVersion: 'v2' }, { type: 'updateSettings', webhookUrl: null }] as const) {
        expect(refusal(request, nodeIn(status))).toEqual({ code: 'node_destroyed', message: `node n1 is ${status}`, details: { status } });
      }
      expect(refusal({ type: 'destroy' }, nodeIn(status))).toEqual({ code: 'node_destroyed', message: `node n1 is already ${status}`, details: { status } });
    }
  });

  it('turns a refusal into the 409 AppError the API answers with', () => {
    const d = decide({ type: 'start' }, nodeIn('RUNNING'));
    const error = refusalError((d as Extract<typeof d, { outcome: 'refused' }>).refusal);
    expect([error.code, error.status, error.message, error.details]).toEqual(['already_running', 409, 'node n1 is already running', { status: 'RUNNING' }]);
    // A request on a node is refused with a 409; a create also by the service (503) or the plan (403).
    for (const type of REQUEST_TYPES.filter((t) => t !== 'create')) {
      for (const check of LIFECYCLE[type].checks) if (check.refusal) expect(ERROR_STATUS[check.refusal.code], type).toBe(409);
    }
    const creationStatuses = LIFECYCLE.create.checks.flatMap((c) => (c.refusal ? [`${c.refusal.code} ${ERROR_STATUS[c.refusal.code]}`] : []));
    expect(creationStatuses).toEqual([
      'build_in_progress 409',
      'service_unavailable 503',
      'no_ports_available 503',
      'wallet_exported 409',
      'backup_older_than_source 409',
      'source_node_live 409',
      'plan_limit_reached 403',
    ]);
  });

  it('changes what each accepted request says, with its build', () => {
    const change = (request: NodeRequest, node = nodeIn('RUNNING')) => decide(request, node);
    expect(change({ type: 'start' }, nodeIn('PAUSED', { locked: false }))).toEqual({
      outcome: 'change',
      change: { status: 'STARTING', desiredState: 'running', locked: true },
      build: 'start',
    });
    expect(change({ type: 'stop' })).toEqual({ outcome: 'change', change: { desiredState: 'stopped' }, build: 'stop' });
    expect(change({ type: 'destroy' })).toEqual({
      outcome: 'change',
      change: { status: 'DESTROYING', desiredState: 'destroyed', autoUnlockSealed: null },
      build: 'destroy',
    });
    expect(change({ type: 'markUnlocked' })).toEqual({ outcome: 'change', change: { locked: false } });
    expect(change({ type: 'markLocked' }, nodeIn('PAUSED', { locked: false }))).toEqual({ outcome: 'change', change: { locked: true } });
    expect(change({ type: 'markInitialized' })).toEqual({ outcome: 'change', change: { initialized: true } });
    expect(change({ type: 'startBuildSucceeded' })).toEqual({ outcome: 'change', change: { status: 'RUNNING', locked: true } });
    expect(change({ type: 'startBuildSucceeded', imageVersion: 'v2' })).toEqual({
      outcome: 'change',
      change: { status: 'RUNNING', locked: true, imageVersion: 'v2' },
    });
    expect(change({ type: 'stopBuildSucceeded' })).toEqual({ outcome: 'change', change: { status: 'PAUSED' } });
    expect(change({ type: 'destroyBuildSucceeded' })).toEqual({ outcome: 'change', change: { status: 'DESTROYED', destroyed: true } });
    expect(change({ type: 'upgradeRolledBack', imageVersion: 'v0' })).toEqual({
      outcome: 'change',
      change: { status: 'RUNNING', locked: true, imageVersion: 'v0' },
    });
    expect(change({ type: 'buildFailed' })).toEqual({ outcome: 'change', change: { status: 'FAILED' } });
    // A restarted daemon is locked again even if the row already says so (RLN semantics).
    expect(change({ type: 'daemonRestarted' })).toEqual({ outcome: 'change', change: { locked: true } });
  });

  it('leaves a node alone when there is nothing to change', () => {
    expect(verdict({ type: 'markUnlocked' }, nodeIn('RUNNING', { locked: false }))).toBe('none');
    expect(verdict({ type: 'markLocked' }, nodeIn('RUNNING', { locked: true }))).toBe('none');
    expect(verdict({ type: 'markInitialized' }, nodeIn('RUNNING', { initialized: true }))).toBe('none');
    expect(verdict({ type: 'updateSettings', webhookUrl: undefined }, nodeIn('RUNNING'))).toBe('none');
    expect(verdict({ type: 'webhookGone', url: 'https://hooks.example/other' }, nodeIn('RUNNING'))).toBe('none');
    expect(verdict({ type: 'webhookGone', url: HOOK }, nodeIn('RUNNING', { settings: {} }))).toBe('none');
  });

  it('turns auto-unlock on with the sealed password, and off, erasing it', () => {
    expect(decide({ type: 'enableAutoUnlock', sealed: 'S2' }, nodeIn('RUNNING', { autoUnlockSealed: 'S1' }))).toEqual({
      outcome: 'change',
      change: { autoUnlockSealed: 'S2' },
    });
    expect(decide({ type: 'enableAutoUnlock', sealed: 'S' }, nodeIn('PAUSED'))).toEqual({
      outcome: 'refused',
      refusal: {
        code: 'node_not_running',
        message: 'node n1 is PAUSED: the password is checked against the running node; turn auto-unlock on once it is RUNNING',
        details: { status: 'PAUSED' },
      },
    });
    const on = nodeIn('RUNNING', { autoUnlockSealed: 'S' });
    expect(decide({ type: 'disableAutoUnlock' }, on)).toEqual({ outcome: 'change', change: { autoUnlockSealed: null } });
    expect(decide({ type: 'autoUnlockFailed', sealed: 'S' }, on)).toEqual({ outcome: 'change', change: { autoUnlockSealed: null } });
    expect(verdict({ type: 'disableAutoUnlock' }, nodeIn('RUNNING'))).toBe('none');
    // A failure with a password the user has since replaced (or removed) leaves the new one alone.
    expect(verdict({ type: 'autoUnlockFailed', sealed: 'S' }, nodeIn('RUNNING', { autoUnlockSealed: 'S2' }))).toBe('none');
    expect(verdict({ type: 'autoUnlockFailed', sealed: 'S' }, nodeIn('RUNNING'))).toBe('none');
  });

  it('sets, removes and forgets webhook URLs', () => {
    const withUrl = nodeIn('RUNNING');
    expect(decide({ type: 'updateSettings', webhookUrl: 'https://hooks.example/b' }, withUrl)).toEqual({
      outcome: 'change',
      change: { settings: { webhookUrl: 'https://hooks.example/b' } },
    });
    expect(decide({ type: 'updateSettings', webhookUrl: null }, withUrl)).toEqual({ outcome: 'change', change: { settings: {} } });
    expect(decide({ type: 'webhookGone', url: HOOK }, withUrl)).toEqual({ outcome: 'change', change: { settings: {} } });
  });

  it('keeps a daemon running only for a RUNNING node that should run', () => {
    expect(daemonShouldRun({ status: 'RUNNING', desiredState: 'running' })).toBe(true);
    expect(daemonShouldRun({ status: 'RUNNING', desiredState: 'stopped' })).toBe(false);
    expect(daemonShouldRun({ status: 'RUNNING', desiredState: 'running', supersededBy: 'n2' })).toBe(false);
    for (const status of EVERY_STATUS.filter((s) => s !== 'RUNNING')) expect(daemonShouldRun({ status, desiredState: 'running' })).toBe(false);
  });

  describe('a node superseded by a restore of its wallet', () => {
    it('is stopped and fenced: superseded_by set, a stop build', () => {
      expect(decide({ type: 'supersede', by: 'n2' }, nodeIn('RUNNING', { locked: false }))).toEqual({
        outcome: 'change',
        change: { desiredState: 'stopped', supersededBy: 'n2' },
        build: 'stop',
      });
    });

    it('is never started, upgraded (by its user or a rollout), called or given automatic unlock again; destroy is left', () => {
      for (const status of ['RUNNING', 'PAUSED', 'FAILED'] as const) {
        const node = nodeIn(status, { supersededBy: 'n2' });
        for (const request of [{ type: 'start' }, { type: 'upgrade', toVersion: 'v2' }, { type: 'rolloutUpgrade', toVersion: 'v2' }, { type: 'enableAutoUnlock', sealed: 'S' }, { type: 'callDaemon' }] as NodeRequest[]) {
          const d = decide(request, node);
          expect(d.outcome === 'refused' && d.refusal.code, `${request.type} in ${status}`).toBe('node_superseded');
          if (d.outcome === 'refused') expect(d.refusal.details).toEqual({ supersededBy: 'n2' });
        }
        expect(verdict({ type: 'destroy' }, node)).toBe('change');
      }
    });
  });
});

describe('an export', () => {
  it('needs a running node with a wallet, not one being stopped, and ends it EXPORTED, stopped, locked, without a sealed password', () => {
    expect(verdict({ type: 'export' }, nodeIn('RUNNING'))).toBe('node_not_initialized');
    expect(verdict({ type: 'export' }, nodeIn('RUNNING', { initialized: true, desiredState: 'stopped' }))).toBe('node_not_running');
    expect(verdict({ type: 'export' }, nodeIn('RUNNING', { initialized: true, supersededBy: 'n2' }))).toBe('node_superseded');
    expect(decide({ type: 'exportCompleted' }, nodeIn('RUNNING', { initialized: true, locked: false, autoUnlockSealed: 'S' }))).toEqual({
      outcome: 'change',
      change: { status: 'EXPORTED', desiredState: 'stopped', locked: true, autoUnlockSealed: null },
    });
    expect(verdict({ type: 'exportCompleted' }, nodeIn('RUNNING', { supersededBy: 'n2' }))).toBe('none');
    expect(daemonShouldRun({ status: 'EXPORTED', desiredState: 'stopped' })).toBe(false);
  });
});

describe('a create', () => {
  const PLAN = { name: 'Starter', maxNodes: 2, maxUsers: 1 } as unknown as PlanDefinition;
  const live = (id: string, more: Partial<Node> = {}) => ({ id, userId: 'u1', name: `node ${id}`, status: 'RUNNING', ...more }) as Node;
  const fence = (more: Partial<RestoreFence> = {}): RestoreFence => ({ backupId: 'b1', sourceId: 's1', exported: false, ...more });
  const refusal = (facts: CreationFacts) => {
    const d = decide({ type: 'create', facts });
    return d.outcome === 'refused' ? d.refusal : d.outcome;
  };

  it('makes a STARTING node with a create build when nothing refuses it', () => {
    expect(decide({ type: 'create', facts: CREATABLE })).toEqual({
      outcome: 'change',
      change: { status: 'STARTING', desiredState: 'running', locked: true, initialized: false },
      build: 'create',
    });
  });

  it('needs a released image version, then free ports (503s without details)', () => {
    expect(refusal({ ...CREATABLE, release: null, ports: null })).toEqual({ code: 'service_unavailable', message: 'no image version has been released yet' });
    expect(refusal({ ...CREATABLE, ports: null })).toEqual({
      code: 'no_ports_available',
      message: 'no free ports are left for a new node (NODE_PORT_RANGE, or K8S_PEER_PORT_RANGE with HostPort peers)',
    });
  });

  it('refuses nothing it has not been told yet: the service stops finding facts at the first refusal', () => {
    expect(refusal({ userId: 'u1', release: 'v1' })).toBe('change');
  });

  it('counts the live nodes against the plan, a superseded node of the account being replaced', () => {
    expect(refusal({ ...CREATABLE, plan: { plan: PLAN, liveNodes: 1 } })).toBe('change');
    expect(refusal({ ...CREATABLE, plan: { plan: PLAN, liveNodes: 2 } })).toEqual({
      code: 'plan_limit_reached',
      message: 'the Starter plan allows 2 nodes and the account has 2; change the plan for more',
      details: { limit: 'nodes', max: 2, used: 2, plan: 'Starter' },
    });
    const superseding = { fence: fence({ live: live('s1') }), choices: { supersedeSource: true } };
    expect(refusal({ ...CREATABLE, restore: superseding, plan: { plan: PLAN, liveNodes: 2 } })).toBe('change');
    expect(supersededByCreation({ ...CREATABLE, restore: superseding })?.id).toBe('s1');
    // Another account's node (a wallet restored across accounts) does not make room in this one.
    const othersNode = { fence: fence({ live: live('s1', { userId: 'u2' }) }), choices: { supersedeSource: true } };
    expect(refusal({ ...CREATABLE, restore: othersNode, plan: { plan: PLAN, liveNodes: 2 } })).toMatchObject({ code: 'plan_limit_reached' });
  });

  it('keeps one live copy of a wallet: an exported wallet, an older backup unconfirmed, a live holder not superseded', () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    expect(refusal({ ...CREATABLE, restore: { fence: fence({ exported: true }), choices: {} } })).toEqual({
      code: 'wallet_exported',
      message:
        "backup b1 holds the wallet of node s1, which was exported: that wallet left with its owner's final backup and lives only in their copy now; " +
        'restoring it here would make two live copies of one Lightning wallet, which lose funds',
      details: { sourceNodeId: 's1' },
    });
    const older = fence({ newer: { id: 'b2', nodeId: 's1', at } });
    expect(refusal({ ...CREATABLE, restore: { fence: older, choices: {} } })).toEqual({
      code: 'backup_older_than_source',
      message:
        'backup b1 is older than the newest successful backup of its wallet (b2 of node s1, made 2026-01-02T03:04:05.000Z): an older backup holds ' +
        "older channel states, and a node that broadcasts one loses the channel's funds to the peer. Restore the newest backup, or pass " +
        'restore.confirmOlderBackup: true if you know the channels are safe',
      details: { newestBackupId: 'b2', newestBackupNodeId: 's1', newestBackupAt: '2026-01-02T03:04:05.000Z' },
    });
    expect(refusal({ ...CREATABLE, restore: { fence: older, choices: { confirmOlderBackup: true } } })).toBe('change');
    const held = fence({ live: live('s1') });
    expect(refusal({ ...CREATABLE, restore: { fence: held, choices: {} } })).toEqual({
      code: 'source_node_live',
      message:
        'backup b1 holds the wallet of node s1 (node s1, RUNNING), which still exists: two live copies of one Lightning wallet will broadcast an ' +
        'old channel state and lose the funds. Destroy node s1 first, or pass restore.supersedeSource: true to stop it and keep it from ever starting again',
      details: { sourceNodeId: 's1', status: 'RUNNING', options: ['destroy the source node', 'restore.supersedeSource: true'] },
    });
    expect(refusal({ ...CREATABLE, restore: { fence: held, choices: { supersedeSource: true } } })).toBe('change');
    expect(supersededByCreation({ ...CREATABLE, restore: { fence: held, choices: {} } })).toBeUndefined();
  });

  it('checks in order: the service, the ports, the wallet, then the plan', () => {
    const everything: CreationFacts = { userId: 'u1', release: null, ports: null, restore: { fence: fence({ exported: true }), choices: {} }, plan: { plan: PLAN, liveNodes: 9 } };
    expect(refusal(everything)).toMatchObject({ code: 'service_unavailable' });
    expect(refusal({ ...everything, release: 'v1' })).toMatchObject({ code: 'no_ports_available' });
    expect(refusal({ ...everything, release: 'v1', ports: CREATABLE.ports })).toMatchObject({ code: 'wallet_exported' });
    expect(refusal({ ...everything, release: 'v1', ports: CREATABLE.ports, restore: undefined })).toMatchObject({ code: 'plan_limit_reached' });
  });
});

describe('storage lost and recover', () => {
  it('storage found lost: STORAGE_LOST and locked, left to a build in progress or a superseded node', () => {
    expect(decide({ type: 'storageLost' }, nodeIn('RUNNING', { locked: false, initialized: true }))).toEqual({
      outcome: 'change',
      change: { status: 'STORAGE_LOST', locked: true },
    });
    expect(verdict({ type: 'storageLost' }, nodeIn('RUNNING'), { buildNumber: 2, action: 'upgrade' })).toBe('none');
    expect(verdict({ type: 'storageLost' }, nodeIn('RUNNING', { supersededBy: 'n2' }))).toBe('none');
    expect(daemonShouldRun({ status: 'STORAGE_LOST', desiredState: 'running' })).toBe(false);
  });

  it('recover: STARTING on a recover build, not initialised, automatic unlock off; only from STORAGE_LOST', () => {
    expect(decide({ type: 'recover' }, nodeIn('STORAGE_LOST', { initialized: true, autoUnlockSealed: 'S' }))).toEqual({
      outcome: 'change',
      change: { status: 'STARTING', desiredState: 'running', locked: true, initialized: false, autoUnlockSealed: null },
      build: 'recover',
    });
    const refused = decide({ type: 'recover' }, nodeIn('RUNNING'));
    expect(refused).toEqual({
      outcome: 'refused',
      refusal: { code: 'storage_not_lost', message: 'node n1 is RUNNING: only a node whose storage was lost (STORAGE_LOST) is recovered', details: { status: 'RUNNING' } },
    });
    expect(ERROR_STATUS.storage_not_lost).toBe(409);
  });

  it('a STORAGE_LOST node is not started, stopped or upgraded: it says to recover it', () => {
    const refused = decide({ type: 'start' }, nodeIn('STORAGE_LOST'));
    expect(refused.outcome === 'refused' && refused.refusal.message).toBe('node n1 lost its storage; recover it (POST /api/nodes/n1/recover) or destroy it');
    expect(ERROR_STATUS.node_storage_lost).toBe(409);
  });
});
