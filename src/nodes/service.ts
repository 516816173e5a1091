// The node service: what users can do to their nodes. Every change of what runs is recorded as a
// build and carried out by a durable job enqueued in the same transaction as the state change.
import type { Database, Queryable } from '../db/database.ts';
import { buildsByNode, findBuildInProgress } from '../db/builds.ts';
import { lockAccountPlan } from '../db/plans.ts';
import { requireRoomFor } from '../domain/plan-limits.ts';
import { countsAsRunning } from '../domain/node-status-meaning.ts';
import type { PlanDefinition } from '../domain/plans.ts';
import { enqueueBuild } from './builds/enqueue-build.ts';
import { countLiveNodes, countRunningNodes, findUserNode, findUserNodeStatus, listUserNodesWithBuilds, lockNode, lockUserNode, updateNode } from '../db/nodes.ts';
import type { Network, NodeSettings, NodeStatus, Node } from '../domain/nodes.ts';
import { latestRelease } from '../db/releases.ts';
import { decodeCursor, encodeCursor, pageOf, staleCursor } from '../domain/paging.ts';
import { findUserBackup, tieUploadToNode } from '../db/backups.ts';
import { insertNodeRestore } from '../db/node-restores.ts';
import { findRestoreFence, type RestoreChoices } from './restore/restore-fence.ts';
import { AppError, nodeNotFound } from '../errors.ts';
import { newId } from '../auth/tokens.ts';
import type { NodeRuntime } from '../runtime/types.ts';
import { applyDecision, insertDecidedNode } from './transition.ts';
import { decide, refusalError, refusedWhileBuilding, supersededByCreation, type CreationFacts, type Decision, type NodeRequest } from './lifecycle.ts';
import { DEFAULT_PEER_PORT, nodeApiAddress, presentCreatedNode, presentNode, type ApiNode, type PresentOptions } from './present.ts';
import { listUserNodePageJson, listUserNodesJson, type NodeListJsonOptions } from '../db/node-list-json.ts';
import { claimIdempotencyKey, saveIdempotentAnswer } from '../db/idempotency.ts';
import type { UnlockSeal } from '../secrets/unlock-seal.ts';
import { restoreSealContext } from './restore/restore-password.ts';
import { continuousStateFor } from '../domain/continuous-state.ts';

/** A client's key for retrying a creation safely, with the fingerprint of the request it came with. */
export interface IdempotencyKey {
  key: string;
  requestHash: string;
}

export interface CreateNodeInput {
  name: string;
  network: Network;
  /** As the user sent it: the webhook URL is checked here (see NodeServiceDeps.webhooks). */
  settings?: { webhookUrl?: string | null; continuousState?: boolean };
  /** Create the node from one of the user's backups: its wallet is restored by the create build. */
  restore?: { backupId: string; password: string } & RestoreChoices;
}

/**
 * Checks a webhook URL a user sent (scheme, credentials, the addresses it resolves to: SSRF) and
 * returns it normalised; an empty string or null becomes null (no URL), undefined stays undefined
 * (unchanged). Throws a 400 naming the reason. WebhookService.checkWebhookUrl is the one used.
 */
export type WebhookUrlCheck = (webhookUrl: string | null | undefined) => Promise<string | null | undefined>;

const WAIT_POLL_MS = 250;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface CreatedNode {
  body: ReturnType<typeof presentCreatedNode>;
  /** True when an idempotent retry got the first request's answer. */
  replayed: boolean;
}

export interface NodeActionResult {
  nodeId: string;
  status: Node['status'];
}

export interface NodeServiceDeps {
  db: Database;
  /** Where clients reach the API and the nodes: what a node's answer tells them. */
  config: { nodeApiUrl: string; publicUrl: string; vssMaxBytesPerNode: number };
  /** What runs the nodes: a new node gets its ports from it. */
  runtime: Pick<NodeRuntime<Queryable>, 'assignPorts'>;
  /** Every webhook URL passes its check before it is stored, whoever calls the service (WebhookService). */
  webhooks: { checkWebhookUrl: WebhookUrlCheck };
  /** Seals a restore password for the node's create build (restore-password.ts); absent: restores refused. */
  seal?: Pick<UnlockSeal, 'seal'>;
}

export class NodeService {
  private readonly presentOpts: PresentOptions;
  /** presentOpts for the lists the database writes as JSON (db/node-list-json.ts). */
  private readonly listJsonOpts: NodeListJsonOptions;

  constructor(private readonly deps: NodeServiceDeps) {
    this.presentOpts = {
      nodeApiUrl: deps.config.nodeApiUrl,
      peerHost: new URL(deps.config.publicUrl).hostname,
      ...nodeApiAddress(deps.config.nodeApiUrl),
      vssSoftLimitBytes: deps.config.vssMaxBytesPerNode,
    };
    this.listJsonOpts = { ...this.presentOpts, defaultPeerPort: DEFAULT_PEER_PORT };
  }

  /** `onlyIds`: just these of the user's nodes (a token limited to them); null: every one. */
  async listNodes(userId: string, onlyIds: readonly string[] | null = null): Promise<ApiNode[]> {
    const nodes = await listUserNodesWithBuilds(this.deps.db, userId, { onlyIds });
    return nodes.map(({ node, builds }) => presentNode(node, builds, this.presentOpts));
  }

  /**
   * listNodes as the JSON text of GET /api/nodes, `{"nodes":[...]}`, written by the database
   * (db/node-list-json.ts): the route sends it without parsing and serializing it again.
   */
  async listNodesJson(userId: string, onlyIds: readonly string[] | null = null): Promise<string> {
    return listUserNodesJson(this.deps.db, userId, onlyIds, this.listJsonOpts);
  }

  /**
   * One page of the caller's nodes, oldest first, as the JSON text of GET /api/nodes?limit=
   * (`{"nodes":[...],"nextCursor":...}`, written by the database like listNodesJson), and the
   * cursor of the next page (null after the last). A cursor names the last node of its page; one
   * that is not the caller's is refused.
   */
  async listNodePageJson(userId: string, limit: number, cursor: string | undefined, onlyIds: readonly string[] | null = null): Promise<string> {
    const afterId = cursor === undefined ? undefined : decodeCursor('node', cursor, ID);
    if (afterId !== undefined && !(await findUserNode(this.deps.db, userId, afterId))) throw staleCursor();
    // One more than asked tells whether another page follows.
    const rows = await listUserNodePageJson(this.deps.db, userId, { afterId, limit: limit + 1, onlyIds }, this.listJsonOpts);
    const page = pageOf(rows, limit, (last) => encodeCursor('node', last.id));
    return `{"nodes":[${page.items.map((r) => r.json).join(',')}],"nextCursor":${JSON.stringify(page.nextCursor)}}`;
  }

  /** Whether the user has this node (in any status), without reading more of it. */
  async ownsNode(userId: string, nodeId: string): Promise<boolean> {
    return (await findUserNodeStatus(this.deps.db, userId, nodeId)) !== undefined;
  }

  async getNode(userId: string, nodeId: string): Promise<ApiNode> {
    // The node and its builds in one statement: GET /api/nodes/{id} is the API's most frequent read.
    const [found] = await listUserNodesWithBuilds(this.deps.db, userId, { onlyIds: [nodeId], limit: 1 });
    if (!found) throw nodeNotFound(nodeId);
    return presentNode(found.node, found.builds, this.presentOpts);
  }

  /**
   * The node once it has `status` (or is DESTROYED, which no status follows), or as it is when
   * `timeoutMs` passed or `signal` aborted. Polls a cheap status query rather than holding anything.
   */
  async waitForStatus(userId: string, nodeId: string, status: NodeStatus, timeoutMs: number, signal?: AbortSignal): Promise<ApiNode> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = await findUserNodeStatus(this.deps.db, userId, nodeId);
      if (!current) throw nodeNotFound(nodeId);
      const done = current === status || current === 'DESTROYED' || Date.now() >= deadline || signal?.aborted;
      if (done) return this.getNode(userId, nodeId);
      await sleep(Math.min(WAIT_POLL_MS, Math.max(0, deadline - Date.now())));
    }
  }

  async latestImageVersion(): Promise<string> {
    const release = await latestRelease(this.deps.db);
    if (!release) throw new AppError('service_unavailable', 'no image version has been released yet');
    return release.version;
  }

  /**
   * Creates a node and its create build. With an idempotency key, a retry of the same request
   * gets the first answer and creates nothing; the key is claimed in the same transaction, so a
   * failed creation leaves no key behind.
   */
  async createNode(userId: string, input: CreateNodeInput, idempotency?: IdempotencyKey): Promise<CreatedNode> {
    // Checked before anything is stored, and outside the transaction: it may wait on DNS.
    const webhookUrl = await this.deps.webhooks.checkWebhookUrl(input.settings?.webhookUrl);
    const settings: NodeSettings = webhookUrl ? { webhookUrl } : {};
    return this.deps.db.transaction(async (tx) => {
      if (idempotency) {
        const stored = await claimIdempotencyKey(tx, userId, idempotency.key, idempotency.requestHash);
        if (stored && stored.request_hash !== idempotency.requestHash) {
          throw new AppError('idempotency_conflict', 'this Idempotency-Key was already used with a different request body');
        }
        if (stored) return { body: await this.replayedCreation(tx, userId, stored.response_body as CreatedNode['body']), replayed: true };
      }
      const { facts, backup } = await this.findCreationFacts(tx, userId, input);
      const creation = decide({ type: 'create', facts });
      if (creation.outcome === 'refused') throw refusalError(creation.refusal);
      const { release, ports, restore } = facts;
      if (release === null || !ports) throw new Error('the create rule accepted a node without a release or ports');
      const fence = restore?.fence;
      const superseded = supersededByCreation(facts);
      const supersedeBuild = superseded ? await findBuildInProgress(tx, superseded.id) : undefined;
      const supersede = superseded && decide({ type: 'supersede', by: '' }, superseded, supersedeBuild);
      if (supersede?.outcome === 'refused') throw refusalError(supersede.refusal);
      const node = await insertDecidedNode(
        tx,
        {
          id: newId(),
          userId: userId,
          name: input.name,
          network: input.network,
          imageVersion: release,
          settings,
          restPort: ports.restPort,
          peerPort: ports.peerPort,
          continuousState: continuousStateFor(release, input.settings?.continuousState),
        },
        creation,
      );
      if (backup && input.restore) {
        const sealedPassword = this.deps.seal!.seal(input.restore.password, restoreSealContext(node.id));
        await insertNodeRestore(tx, { nodeId: node.id, backupId: backup.id, sealedPassword });
      }
      // The wallet's last node is destroyed: this node holds the wallet from now on, for the next restore's fence.
      if (fence?.link) await updateNode(tx, fence.link.id, { supersededBy: node.id });
      if (fence?.tieUpload && backup) await tieUploadToNode(tx, backup.id, node.id);
      if (superseded) await carryOut(tx, superseded, decide({ type: 'supersede', by: node.id }, superseded, supersedeBuild), superseded.imageVersion);
      if (creation.outcome === 'change' && creation.build) await enqueueBuild(tx, node, creation.build, release);
      const body = presentCreatedNode(node, await this.present(tx, node));
      if (idempotency) await saveIdempotentAnswer(tx, userId, idempotency.key, body);
      return { body, replayed: false };
    });
  }

  /**
   * A stored first answer. One stored by a version before `data.node` existed (a retry within the
   * key's day across an update) gets the node as it is now, so it keeps the answer's shape.
   */
  private async replayedCreation(tx: Queryable, userId: string, body: CreatedNode['body']): Promise<CreatedNode['body']> {
    if (body.data.node !== undefined) return body;
    const node = await findUserNode(tx, userId, body.data.nodeId);
    if (!node) throw nodeNotFound(body.data.nodeId);
    return { ...body, data: { ...body.data, node: await this.present(tx, node) } };
  }

  /**
   * What the create rule judges a new node on (CreationFacts), found in its order and no further
   * than the first refusal; with the backup a restore names, which must be the user's, finished and
   * of the node's network.
   */
  private async findCreationFacts(tx: Queryable, userId: string, input: CreateNodeInput) {
    const facts: CreationFacts = { userId, release: (await latestRelease(tx))?.version ?? null };
    const refused = () => decide({ type: 'create', facts }).outcome === 'refused';
    if (refused()) return { facts };
    facts.ports = (await this.deps.runtime.assignPorts(tx)) ?? null;
    if (refused()) return { facts };
    const backup = input.restore ? await this.restorableBackup(tx, userId, input.restore.backupId, input.network) : undefined;
    if (backup && input.restore) facts.restore = { fence: await findRestoreFence(tx, backup), choices: input.restore };
    if (refused()) return { facts, backup };
    // The account stays locked until this node is stored.
    const plan = await lockAccountPlan(tx, userId);
    facts.plan = { plan: plan ?? null, liveNodes: plan ? await countLiveNodes(tx, userId) : 0 };
    return { facts, backup };
  }

  /** One of the user's finished backups, of the network the new node is on. */
  private async restorableBackup(tx: Queryable, userId: string, backupId: string, network: Network) {
    if (!this.deps.seal) throw new AppError('service_unavailable', 'this service cannot restore backups');
    const backup = await findUserBackup(tx, userId, backupId);
    if (!backup) throw new AppError('backup_not_found', `backup ${backupId} was not found`);
    if (backup.status !== 'SUCCEEDED') {
      throw new AppError('backup_not_ready', `backup ${backupId} is ${backup.status}: only a finished backup can be restored`, { status: backup.status });
    }
    if (backup.network && backup.network !== network) {
      const problem = `backup ${backupId} is of a ${backup.network} node; restore it into a ${backup.network} node`;
      throw new AppError('invalid_request', problem, { problems: [problem] });
    }
    return backup;
  }

  /**
   * Starts a PAUSED or FAILED node: STARTING, then RUNNING and locked. A node of a plan that
   * upgrades automatically comes up on the latest image version (the upgrade it missed while
   * paused), with the same rollback as an upgrade.
   */
  async startNode(userId: string, nodeId: string): Promise<NodeActionResult> {
    return this.deps.db.transaction(async (tx) => {
      const { node, decision } = await this.decideOnOwnNode(tx, userId, nodeId, { type: 'start' });
      // Locked after the node, as a create locks the node it supersedes before the account.
      const plan = await lockAccountPlan(tx, userId);
      if (decision.outcome === 'change') await requireRoomToRun(tx, plan, userId, node);
      const latest = await latestRelease(tx);
      const version = plan?.autoUpgrade && latest ? latest.version : node.imageVersion;
      const after = await carryOut(tx, node, decision, version);
      return { nodeId, status: after.status };
    });
  }

  /** Stops a RUNNING (or FAILED) node's daemon, keeping its storage: PAUSED once the build completes. */
  async stopNode(userId: string, nodeId: string): Promise<NodeActionResult> {
    return this.deps.db.transaction(async (tx) => {
      const { node, decision } = await this.decideOnOwnNode(tx, userId, nodeId, { type: 'stop' });
      const after = await carryOut(tx, node, decision, node.imageVersion);
      return { nodeId, status: after.status };
    });
  }

  /** Moves a RUNNING (or FAILED) node to the latest image version; see replaceImage in build-job.ts. */
  async upgradeNode(userId: string, nodeId: string): Promise<{ nodeId: string; fromVersion: string; toVersion: string }> {
    return this.deps.db.transaction(async (tx) => {
      const node = await lockOwnNode(tx, userId, nodeId);
      const toVersion = (await latestRelease(tx))?.version;
      const decision = await judge(tx, node, { type: 'upgrade', toVersion });
      if (decision.outcome === 'change') await requireRoomToRun(tx, await lockAccountPlan(tx, userId), userId, node);
      await carryOut(tx, node, decision, toVersion!);
      return { nodeId, fromVersion: node.imageVersion, toVersion: toVersion! };
    });
  }

  /**
   * A STORAGE_LOST node comes up on a fresh, empty volume (the recover build: the old daemon and
   * volume gone first), RUNNING, locked and not initialised; its owner initialises it with their
   * mnemonic and unlocks it. The service never sees the mnemonic here.
   */
  async recoverNode(userId: string, nodeId: string): Promise<NodeActionResult> {
    return this.deps.db.transaction(async (tx) => {
      const { node, decision } = await this.decideOnOwnNode(tx, userId, nodeId, { type: 'recover' });
      if (decision.outcome === 'change') await requireRoomToRun(tx, await lockAccountPlan(tx, userId), userId, node);
      const after = await carryOut(tx, node, decision, node.imageVersion);
      return { nodeId, status: after.status };
    });
  }

  async destroyNode(userId: string, nodeId: string): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      const { node, decision } = await this.decideOnOwnNode(tx, userId, nodeId, { type: 'destroy' });
      await carryOut(tx, node, decision, node.imageVersion);
    });
  }

  /**
   * The daemon accepted an unlock: the node is unlocked until its next start or upgrade. Called by
   * the node gateway after the node answered 200 to /unlock.
   */
  async markUnlocked(nodeId: string): Promise<void> {
    await this.markNode(nodeId, { type: 'markUnlocked' });
  }

  /**
   * Changes the node's settings. `webhookUrl` is checked first (a refused one stores nothing);
   * an empty string or null removes it, undefined leaves it as it is.
   */
  async updateSettings(userId: string, nodeId: string, change: { webhookUrl?: string | null; continuousState?: boolean }): Promise<void> {
    const webhookUrl = await this.deps.webhooks.checkWebhookUrl(change.webhookUrl);
    await this.deps.db.transaction(async (tx) => {
      const { continuousState } = change;
      const { node, decision } = await this.decideOnOwnNode(tx, userId, nodeId, { type: 'updateSettings', webhookUrl, continuousState });
      // Turning it on where the node's release cannot is refused before anything is stored.
      if (continuousState !== undefined && decision.outcome === 'change') continuousStateFor(node.imageVersion, continuousState);
      await applyDecision(tx, node, decision);
    });
  }

  /** The daemon accepted /lock: locked until the next unlock. Called by the node gateway. */
  async markLocked(nodeId: string): Promise<void> {
    await this.markNode(nodeId, { type: 'markLocked' });
  }

  /** The daemon accepted /init: its wallet exists. Called by the node gateway. */
  async markInitialized(nodeId: string): Promise<void> {
    await this.markNode(nodeId, { type: 'markInitialized' });
  }

  private async markNode(nodeId: string, request: NodeRequest): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      const node = await lockNode(tx, nodeId);
      if (node) await applyDecision(tx, node, decide(request, node));
    });
  }

  /** The caller's node, row-locked, and what the lifecycle table says to `request` on it (a refusal is thrown). */
  private async decideOnOwnNode(tx: Queryable, userId: string, nodeId: string, request: NodeRequest) {
    const node = await lockOwnNode(tx, userId, nodeId);
    return { node, decision: await judge(tx, node, request) };
  }

  private async present(db: Queryable, node: Node) {
    const builds = await buildsByNode(db, [node.id]);
    return presentNode(node, builds.get(node.id) ?? [], this.presentOpts);
  }
}

/** A node about to run that did not count as running needs room under the plan's limit on running nodes. */
async function requireRoomToRun(tx: Queryable, plan: PlanDefinition | undefined, accountId: string, node: Node) {
  if (!plan || countsAsRunning(node)) return;
  requireRoomFor(plan, 'runningNodes', await countRunningNodes(tx, accountId, node.id));
}

/** Another user's node is as missing as an unknown one. */
async function lockOwnNode(tx: Queryable, userId: string, nodeId: string): Promise<Node> {
  const node = await lockUserNode(tx, userId, nodeId);
  if (!node) throw nodeNotFound(nodeId);
  return node;
}

/** What the lifecycle table says to `request` on a locked node; a refusal is thrown as its 409. */
async function judge(tx: Queryable, node: Node, request: NodeRequest): Promise<Decision> {
  const build = refusedWhileBuilding(request.type) ? await findBuildInProgress(tx, node.id) : undefined;
  const decision = decide(request, node, build);
  if (decision.outcome === 'refused') throw refusalError(decision.refusal);
  return decision;
}

/** Applies an accepted decision and enqueues the build that carries it out, on `imageVersion`. */
async function carryOut(tx: Queryable, node: Node, decision: Decision, imageVersion: string): Promise<Node> {
  const after = await applyDecision(tx, node, decision);
  if (decision.outcome === 'change' && decision.build) await enqueueBuild(tx, after, decision.build, imageVersion);
  return after;
}

// Cursors are opaque to clients (base64url), so their form can change without breaking them.

const ID = /^[0-9a-f]{32}$/;
