// The node daemons as the services reach them: `of(node)` is one node's daemon, its RLN calls bound
// to where the runtime runs it (its address) and its storage (the client backups folder), so no
// service composes an address from the runtime itself or is handed a function that does. Built
// once beside the runtime and the RLN client (composition/node-calls.ts).
import type { Node } from '../domain/nodes.ts';
import type { RlnAnswer } from '../rln/answer.ts';
import type { CallOptions, RlnClient, RlnEndpoint } from '../rln/client.ts';
import type { NodeBearers, NodeCallerRole } from '../rln/node-bearer.ts';
import type { VssBackupInfo } from '../rln/vss-backup-info.ts';
import type { NodeEndpoint, NodeRuntime, NodeStorageFiles } from '../runtime/types.ts';
import { specOf } from './builds/build-job.ts';

type DaemonRuntime = Pick<NodeRuntime, 'endpoint'> & { storageFiles: Pick<NodeStorageFiles, 'clientBackupPath' | 'prepareClientBackups'> };
type DaemonClient = Pick<RlnClient, 'call' | 'unlock' | 'init' | 'nodeInfo' | 'networkInfo' | 'vssBackupInfo'>;

/** One node's daemon. */
export interface NodeDaemon {
  /** Where its REST API answers now (what a gateway forwards to). */
  readonly endpoint: NodeEndpoint;
  /** The endpoint with the Biscuit of `role` the node is sent (issue #40); admin for the service's own calls. */
  authorizedEndpoint(role?: NodeCallerRole): Promise<RlnEndpoint>;
  call(method: 'GET' | 'POST', path: string, options?: CallOptions): Promise<RlnAnswer>;
  unlock(body: Record<string, unknown>, headers?: Record<string, string>): Promise<RlnAnswer>;
  init(body: { password: string; mnemonic?: string }): Promise<RlnAnswer>;
  nodeInfo(timeoutMs?: number): Promise<RlnAnswer>;
  networkInfo(timeoutMs?: number): Promise<RlnAnswer>;
  /** What it knows of its continuous state (RLN's fork's /vssbackupinfo). */
  vssBackupInfo(timeoutMs?: number): Promise<VssBackupInfo>;
  /** A backup a client keeps on the node, as the daemon sees its path (nodes/paths/backup-path.ts). */
  clientBackupPath(fileName: string): string;
  /** The client backups folder exists, with what an older version kept in the storage moved into it. */
  prepareClientBackups(): Promise<void>;
}

class RuntimeDaemon implements NodeDaemon {
  constructor(
    private readonly runtime: DaemonRuntime,
    private readonly rln: DaemonClient,
    private readonly node: Node,
    private readonly bearers: NodeBearers | undefined,
  ) {}

  // Asked of the runtime each time: a restarted pod may have moved.
  get endpoint(): NodeEndpoint {
    return this.runtime.endpoint(specOf(this.node));
  }

  async authorizedEndpoint(role: NodeCallerRole = 'admin'): Promise<RlnEndpoint> {
    const authorization = await this.bearers?.authorization(this.node.id, role);
    return authorization === undefined ? this.endpoint : { ...this.endpoint, authorization };
  }

  async call(method: 'GET' | 'POST', path: string, options?: CallOptions) {
    return this.rln.call(await this.authorizedEndpoint(), method, path, options);
  }

  async unlock(body: Record<string, unknown>, headers?: Record<string, string>) {
    return this.rln.unlock(await this.authorizedEndpoint(), body, headers);
  }

  async init(body: { password: string; mnemonic?: string }) {
    return this.rln.init(await this.authorizedEndpoint(), body);
  }

  async nodeInfo(timeoutMs?: number) {
    return this.rln.nodeInfo(await this.authorizedEndpoint(), timeoutMs);
  }

  async networkInfo(timeoutMs?: number) {
    return this.rln.networkInfo(await this.authorizedEndpoint(), timeoutMs);
  }

  async vssBackupInfo(timeoutMs?: number) {
    return this.rln.vssBackupInfo(await this.authorizedEndpoint(), timeoutMs);
  }

  clientBackupPath(fileName: string): string {
    return this.runtime.storageFiles.clientBackupPath(this.node.id, fileName);
  }

  prepareClientBackups(): Promise<void> {
    return this.runtime.storageFiles.prepareClientBackups(this.node.id);
  }
}

export class NodeDaemons {
  /**
   * `bearers`: the Biscuits the service's calls carry (secrets/node-biscuits.ts). Required, so that
   * every place that builds daemons says whether its calls authenticate (undefined only in tests of
   * daemons started without authentication).
   */
  constructor(
    private readonly runtime: DaemonRuntime,
    private readonly rln: DaemonClient,
    private readonly bearers: NodeBearers | undefined,
  ) {}

  of(node: Node): NodeDaemon {
    return new RuntimeDaemon(this.runtime, this.rln, node, this.bearers);
  }
}
