// The node daemons as the services reach them: `of(node)` is one node's daemon, bound to where the
// runtime runs it (its address) and to its storage (the client backups folder), so no service
// composes an address from the runtime itself or is handed a function that does. Built once beside
// the runtime (composition/node-calls.ts); the RLN client is then called with the bound address.
import type { Node } from '../domain/nodes.ts';
import type { NodeEndpoint, NodeRuntime } from '../runtime/types.ts';
import { specOf } from './build-job.ts';

type DaemonRuntime = Pick<NodeRuntime, 'endpoint' | 'storageFiles'>;

/** One node's daemon. */
export interface NodeDaemon {
  /** Where its REST API answers now. */
  readonly endpoint: NodeEndpoint;
  /** A backup a client keeps on the node, as the daemon sees its path (nodes/backup-path.ts). */
  clientBackupPath(fileName: string): string;
  /** The client backups folder exists, with what an older version kept in the storage moved into it. */
  prepareClientBackups(): Promise<void>;
}

class RuntimeDaemon implements NodeDaemon {
  constructor(
    private readonly runtime: DaemonRuntime,
    private readonly node: Node,
  ) {}

  // Asked of the runtime each time: a restarted pod may have moved.
  get endpoint(): NodeEndpoint {
    return this.runtime.endpoint(specOf(this.node));
  }

  clientBackupPath(fileName: string): string {
    return this.runtime.storageFiles.clientBackupPath(this.node.id, fileName);
  }

  prepareClientBackups(): Promise<void> {
    return this.runtime.storageFiles.prepareClientBackups(this.node.id);
  }
}

export class NodeDaemons {
  constructor(private readonly runtime: DaemonRuntime) {}

  of(node: Node): NodeDaemon {
    return new RuntimeDaemon(this.runtime, node);
  }
}
