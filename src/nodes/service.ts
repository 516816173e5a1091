// The node service: what users can do to their nodes. Every change of what runs is recorded as a
// build and carried out by a durable job enqueued in the same transaction as the state change.
import type { Config } from '../config.ts';
import type { Database, Queryable } from '../db/database.ts';
import { buildsByNode, findBuildInProgress, insertBuild, type BuildAction } from '../db/builds.ts';
import { insertJob } from '../db/jobs.ts';
import {
  findUserNode,
  insertNode,
  listUserNodes,
  lockNode,
  lockUserNode,
  usedPorts,
  type Network,
  type NodeRow,
  type NodeSettings,
} from '../db/nodes.ts';
import { latestRelease } from '../db/releases.ts';
import { AppError, nodeNotFound } from '../errors.ts';
import { newId } from '../auth/tokens.ts';
import { allocatePortPair } from '../runtime/ports.ts';
import { changeNode } from './transition.ts';
import { presentNode, type ApiNode } from './present.ts';
import { BUILD_JOB, buildJobKey, type BuildJobPayload } from './build-job.ts';

export interface CreateNodeInput {
  name: string;
  network: Network;
  settings?: NodeSettings;
}

export interface NodeServiceDeps {
  db: Database;
  config: Pick<Config, 'nodeApiUrl' | 'publicUrl' | 'nodePortRange'>;
  /** Tells this process's workers that a job is waiting, so they need not wait for a poll. */
  wakeWorkers: () => void;
}

export class NodeService {
  private readonly presentOpts;

  constructor(private readonly deps: NodeServiceDeps) {
    this.presentOpts = { nodeApiUrl: deps.config.nodeApiUrl, peerHost: new URL(deps.config.publicUrl).hostname };
  }

  async listNodes(userId: string): Promise<ApiNode[]> {
    const nodes = await listUserNodes(this.deps.db, userId);
    const builds = await buildsByNode(this.deps.db, nodes.map((n) => n.id));
    return nodes.map((n) => presentNode(n, builds.get(n.id) ?? [], this.presentOpts));
  }

  async getNode(userId: string, nodeId: string): Promise<ApiNode> {
    const node = await findUserNode(this.deps.db, userId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    return this.present(this.deps.db, node);
  }

  async latestImageVersion(): Promise<string> {
    const release = await latestRelease(this.deps.db);
    if (!release) throw new AppError('service_unavailable', 'no image version has been released yet');
    return release.version;
  }

  async createNode(userId: string, input: CreateNodeInput): Promise<NodeRow> {
    const node = await this.deps.db.transaction(async (tx) => {
      const release = await latestRelease(tx);
      if (!release) throw new AppError('service_unavailable', 'no image version has been released yet');
      const ports = await allocatePortPair(this.deps.config.nodePortRange, await usedPorts(tx));
      if (!ports) throw new AppError('no_ports_available', 'no free ports are left in NODE_PORT_RANGE for a new node');
      const node = await insertNode(tx, {
        id: newId(),
        user_id: userId,
        name: input.name,
        network: input.network,
        image_version: release.version,
        settings: input.settings ?? {},
        rest_port: ports[0],
        peer_port: ports[1],
      });
      await this.startBuild(tx, node, 'create', release.version);
      return node;
    });
    this.deps.wakeWorkers();
    return node;
  }

  async destroyNode(userId: string, nodeId: string): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      const node = await lockUserNode(tx, userId, nodeId);
      if (!node) throw nodeNotFound(nodeId);
      if (node.status === 'DESTROYED' || node.status === 'DESTROYING') {
        throw new AppError('invalid_state', `node ${nodeId} is already ${node.status}`, { status: node.status });
      }
      await this.ensureNoBuildInProgress(tx, node);
      await changeNode(tx, node, { status: 'DESTROYING', desired_state: 'destroyed' });
      await this.startBuild(tx, node, 'destroy', node.image_version);
    });
    this.deps.wakeWorkers();
  }

  /**
   * The daemon accepted an unlock: the node is unlocked until its next start or upgrade. Called by
   * the node gateway after the node answered 200 to /unlock.
   */
  async markUnlocked(nodeId: string): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      const node = await lockNode(tx, nodeId);
      if (node && node.locked && node.status === 'RUNNING') await changeNode(tx, node, { locked: false });
    });
  }

  /** The daemon accepted /init: its wallet exists. Called by the node gateway. */
  async markInitialized(nodeId: string): Promise<void> {
    await this.deps.db.transaction(async (tx) => {
      const node = await lockNode(tx, nodeId);
      if (node && !node.initialized) await changeNode(tx, node, { initialized: true });
    });
  }

  private async ensureNoBuildInProgress(tx: Queryable, node: NodeRow) {
    const build = await findBuildInProgress(tx, node.id);
    if (build) {
      throw new AppError(
        'build_in_progress',
        `node ${node.id} has a build in progress (#${build.build_number}, ${build.action}); try again when it completes`,
        { buildNumber: build.build_number, action: build.action },
      );
    }
  }

  /** Records a build and enqueues the job that carries it out, in the caller's transaction. */
  private async startBuild(tx: Queryable, node: NodeRow, action: BuildAction, imageVersion: string) {
    const build = await insertBuild(tx, {
      nodeId: node.id,
      action,
      imageVersion,
      previousImageVersion: node.image_version,
    });
    const payload: BuildJobPayload = { v: 1, nodeId: node.id, buildNumber: build.build_number };
    await insertJob(tx, {
      kind: BUILD_JOB.kind,
      payload,
      singletonKey: buildJobKey(payload),
      maxAttempts: BUILD_JOB.maxAttempts,
    });
    return build;
  }

  private async present(db: Queryable, node: NodeRow) {
    const builds = await buildsByNode(db, [node.id]);
    return presentNode(node, builds.get(node.id) ?? [], this.presentOpts);
  }
}
