// Everything the service asks of the node daemons goes through one RLN client (rln/client.ts),
// built here once with the node daemons adapter that binds its calls to a node (nodes/node-daemons.ts):
// the gateways forward through it, and the unlock, the health probe, the builds,
// automatic unlock, backups and restores call through it. It is closed once everything that uses
// it has stopped (app.ts).
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import { NodeDaemons } from '../nodes/node-daemons.ts';
import { NodeHealth } from '../nodes/health/node-health.ts';
import { ContinuousStateView } from '../nodes/health/continuous-state.ts';
import { NodeIdentityWatch } from '../nodes/unlock/node-identity.ts';
import { NodeUnlocker } from '../nodes/unlock/node-unlocker.ts';
import { NodePaths } from '../nodes/paths/node-paths.ts';
import type { NodeService } from '../nodes/service.ts';
import { RlnClient } from '../rln/client.ts';
import { NodeTokenRevocations } from '../nodes/tokens/revocations.ts';
import type { UnlockSeal } from '../secrets/unlock-seal.ts';
import type { NodeBearers } from '../rln/node-bearer.ts';
import type { NodeRuntime } from '../runtime/types.ts';

export interface NodeCallsDeps {
  config: Pick<Config, 'nodeAccess'>;
  db: Database;
  runtime: Pick<NodeRuntime, 'endpoint' | 'storageFiles'>;
  nodes: NodeService;
  audit?: Pick<AuditLog, 'record'>;
  /** The Biscuits every call to a node carries (issue #40). */
  bearers: NodeBearers;
  /** Opens the sealed node tokens whose revocations are sent to nodes again. */
  seal: Pick<UnlockSeal, 'open'>;
  log: Logger;
}

export interface NodeCalls {
  rln: RlnClient;
  /** The Biscuits the gateways hand the node for their callers' roles. */
  bearers: NodeBearers;
  /** Each node's daemon, its RLN calls bound to its address and storage (nodes/node-daemons.ts). */
  daemons: NodeDaemons;
  unlocker: NodeUnlocker;
  /** What a node's path means behind the gateways. */
  nodePaths: NodePaths;
  /** GET /api/nodes/{id}/health. */
  health: NodeHealth;
  /** Customers' node token revocations sent to the nodes (again after every unlock). */
  revocations: NodeTokenRevocations;
  /** GET /api/nodes/{id}/continuous-state. */
  continuousState: ContinuousStateView;
}

export function buildNodeCalls({ config, db, runtime, nodes, audit, bearers, seal, log }: NodeCallsDeps): NodeCalls {
  const settings = config.nodeAccess;
  const rln = new RlnClient({ timeoutMs: settings.nodeTimeoutMs, maxRequestBytes: settings.maxRequestBytes, maxResponseBytes: settings.maxResponseBytes });
  const daemons = new NodeDaemons(runtime, rln, bearers);
  // After every unlock: does another live node run the same wallet? (nodes/unlock/node-identity.ts)
  const identity = new NodeIdentityWatch({ db, audit, log });
  const revocations = new NodeTokenRevocations({ db, seal, daemons, log });
  const unlocker = new NodeUnlocker({ db, config: settings, nodes, daemons, identity, revocations, log });
  const nodePaths = new NodePaths({ unlocker, nodes, daemons, audit, log });
  return { rln, bearers, daemons, unlocker, nodePaths, health: new NodeHealth({ db, daemons }), revocations, continuousState: new ContinuousStateView({ db, daemons }) };
}
