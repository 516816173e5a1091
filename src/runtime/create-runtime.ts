// Chooses what runs the nodes from the configuration (RUNTIME): the one place that knows every
// runtime. The Kubernetes client is loaded only when RUNTIME=kubernetes.
import type { KubernetesConfig } from './kubernetes/settings.ts';
import type { Logger } from '../logger.ts';
import { ProcessRuntime } from './process.ts';
import type { NodeRootKeys, NodeRuntime, NodeVssUrls, TakenPorts } from './types.ts';
import type { KubernetesMetrics } from './kubernetes/api-requests.ts';

/** The settings the runtimes are chosen and built from (RUNTIME, K8S_*, RLN_COMMAND, NODE_PORT_RANGE, LOG_FILE*, the environment daemons see). */
export interface RuntimeSettings {
  kubernetes: KubernetesConfig | undefined;
  dataDir: string;
  publicUrl: string;
  rlnCommand: string | undefined;
  nodePortRange: { from: number; to: number };
  logs: { maxFileBytes: number; maxFiles: number };
  /** What daemons of the process runtime see of the service's environment (config.ts). */
  daemonEnvironment: NodeJS.ProcessEnv;
}

/**
 * The runtime, started: its watches running (Kubernetes) or its orphans stopped (process).
 * `takenPorts`: the ports nodes hold, read inside the transaction that creates a node (db/nodes.ts usedPorts).
 * `vssUrls`: the VSS URLs of nodes with continuous state; `rootKeys`: each node's Biscuit root key,
 * for its daemon's --root-public-key (secrets/node-biscuits.ts).
 */
export async function createRuntime<Within>(
  config: RuntimeSettings,
  takenPorts: TakenPorts<Within>,
  log: Logger,
  metrics?: KubernetesMetrics,
  vssUrls?: NodeVssUrls,
  rootKeys?: NodeRootKeys,
): Promise<NodeRuntime<Within>> {
  const logRotation = { maxFileBytes: config.logs.maxFileBytes, maxFiles: config.logs.maxFiles };
  if (config.kubernetes) {
    const { KubernetesRuntime } = await import('./kubernetes/runtime.ts');
    return KubernetesRuntime.start({
      config: config.kubernetes,
      takenPorts,
      defaultPeerHost: new URL(config.publicUrl).hostname,
      metrics,
      log,
      vssUrls,
      rootKeys,
    });
  }
  const runtime = new ProcessRuntime({
    dataDir: config.dataDir,
    takenPorts,
    rlnCommand: config.rlnCommand,
    nodePortRange: config.nodePortRange,
    daemonEnvironment: config.daemonEnvironment,
    log,
    logRotation,
    vssUrls,
    rootKeys,
  });
  await runtime.stopOrphans();
  return runtime;
}
