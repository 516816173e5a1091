// Chooses what runs the nodes from the configuration (RUNTIME): the one place that knows every
// runtime. The Kubernetes client is loaded only when RUNTIME=kubernetes.
import type { KubernetesConfig } from './kubernetes/config.ts';
import type { Logger } from '../logger.ts';
import { allocatePortPair } from './ports.ts';
import { ProcessRuntime } from './process.ts';
import type { NodePorts, NodeRuntime } from './types.ts';

/** The settings the runtimes are chosen and built from (RUNTIME, K8S_*, RLN_COMMAND, NODE_PORT_RANGE, LOG_FILE*). */
export interface RuntimeSettings {
  kubernetes: KubernetesConfig | undefined;
  dataDir: string;
  publicUrl: string;
  rlnCommand: string | undefined;
  nodePortRange: { from: number; to: number };
  logs: { maxFileBytes: number; maxFiles: number };
}

/** The runtime, started: its watches running (Kubernetes) or its orphans stopped (process). */
export async function createRuntime(config: RuntimeSettings, log: Logger): Promise<NodeRuntime> {
  const logRotation = { maxFileBytes: config.logs.maxFileBytes, maxFiles: config.logs.maxFiles };
  if (config.kubernetes) {
    const { KubernetesRuntime } = await import('./kubernetes/runtime.ts');
    return KubernetesRuntime.start({
      config: config.kubernetes,
      dataDir: config.dataDir,
      logRotation,
      defaultPeerHost: new URL(config.publicUrl).hostname,
      log,
    });
  }
  const runtime = new ProcessRuntime({ dataDir: config.dataDir, rlnCommand: config.rlnCommand, log, logRotation });
  await runtime.stopOrphans();
  return runtime;
}

/**
 * How a new node gets its ports on the configured runtime, without starting the runtime (the CLI
 * creates no runtime). `taken` is asked only by runtimes that hand out host ports.
 */
export function nodePortsFor(config: Pick<RuntimeSettings, 'kubernetes' | 'nodePortRange'>): (taken: () => Promise<Set<number>>) => Promise<NodePorts | undefined> {
  if (config.kubernetes) return async () => ({ restPort: null, peerPort: null });
  return async (taken) => {
    const pair = await allocatePortPair(config.nodePortRange, await taken());
    return pair && { restPort: pair[0], peerPort: pair[1] };
  };
}
