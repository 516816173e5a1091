// The node daemons as the services reach them: `of(node)` is one node's daemon, its RLN calls bound
// to where the runtime runs it (its address) and its storage (the client backups folder), so no
// service composes an address from the runtime itself or is handed a function that does. Built
// once beside the runtime and the RLN client (composition/node-calls.ts).
import type { Node } from '../domain/nodes.ts';
import type { RlnAnswer } from '../rln/answer.ts';
import type { CallOptions, RlnClient } from '../rln/client.ts';
import type { VssBackupInfo } from '../rln/vss-backup-info.ts';
import type { NodeEndpoint, NodeRuntime, NodeStorageFiles } from '../runtime/types.ts';
import { specOf } from './builds/build-job.ts';

type DaemonRuntime = Pick<NodeRuntime, 'endpoint'> & { storageFiles: Pick<NodeStorageFiles, 'clientBackupPath' | 'prepareClientBackups'> };
type DaemonClient = Pick<RlnClient, 'call' | 'unlock' | 'init' | 'nodeInfo' | 'networkInfo' | 'vssBackupInfo'>;

/** One node's daemon. */
export interface NodeDaemon {
  /** Where its REST API answers now (what a gateway forwards to). */
  readonly endpoint: NodeEndpoint;
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
  ) {}

  // Asked of the runtime each time: a restarted pod may have moved.
  get endpoint(): NodeEndpoint {
    return this.runtime.endpoint(specOf(this.node));
  }

  call(method: 'GET' | 'POST', path: string, options?: CallOptions) {
    return this.rln.call(this.endpoint, method, path, options);
  }

  unlock(body: Record<string, unknown>, headers?: Record<string, string>) {
    return this.rln.unlock(this.endpoint, body, headers);
  }

  init(body: { password: string; mnemonic?: string }) {
    return this.rln.init(this.endpoint, body);
  }

  nodeInfo(timeoutMs?: number) {
    return this.rln.nodeInfo(this.endpoint, timeoutMs);
  }

  networkInfo(timeoutMs?: number) {
    return this.rln.networkInfo(this.endpoint, timeoutMs);
  }

  vssBackupInfo(timeoutMs?: number) {
    return this.rln.vssBackupInfo(this.endpoint, timeoutMs);
  }

  clientBackupPath(fileName: string): string {
    return this.runtime.storageFiles.clientBackupPath(this.node.id, fileName);
  }

  prepareClientBackups(): Promise<void> {
    return this.runtime.storageFiles.prepareClientBackups(this.node.id);
  }
}

export class NodeDaemons {
  constructor(
    private readonly runtime: DaemonRuntime,
    private readonly rln: DaemonClient,
  ) {}

  of(node: Node): NodeDaemon {
    return new RuntimeDaemon(this.runtime, this.rln, node);
  }
}
