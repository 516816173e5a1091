// Builds the command line of one node daemon: either devnode or the configured RLN command
// template, followed by rgb-lightning-node's own arguments.
import type { NodeSpec } from './types.ts';
import { vssDaemonArgs } from './vss-args.ts';

export interface DaemonCommandInput {
  /** e.g. "/opt/rln/{version}/rgb-lightning-node"; words split on spaces, no shell involved. */
  template: string | undefined;
  /** The devnode launcher, used when no template is configured. */
  devnode: string[];
  storageDir: string;
  spec: NodeSpec;
  /** The node's VSS URL when it has continuous state (spec.continuousState). */
  vssUrl?: string;
  /** The node's Biscuit root public key (hex); null for a node created before keys existed. */
  rootPublicKey: string | null;
}

export function buildDaemonCommand(input: DaemonCommandInput): { command: string; args: string[] } {
  const words = input.template
    ? input.template.trim().split(/\s+/).map((w) => w.replaceAll('{version}', input.spec.imageVersion))
    : input.devnode;
  const [command, ...prefix] = words;
  if (!command) throw new Error('RLN_COMMAND is empty');
  if (input.spec.restPort === null || input.spec.peerPort === null) {
    throw new Error(`node ${input.spec.nodeId} has no host ports: it was created on the kubernetes runtime`);
  }
  return {
    command,
    args: [
      ...prefix,
      input.storageDir,
      '--daemon-listening-port', String(input.spec.restPort),
      '--ldk-peer-listening-port', String(input.spec.peerPort),
      '--network', input.spec.network,
      ...authenticationArgs(input.rootPublicKey),
      ...vssDaemonArgs(input.vssUrl),
    ],
  };
}

/**
 * RLN's authentication: tokens of the node's root key (the service mints them, secrets/node-biscuits.ts),
 * or, for a node created before keys existed, none until its next upgrade gives it a key.
 */
export function authenticationArgs(rootPublicKey: string | null): string[] {
  return rootPublicKey === null ? ['--disable-authentication'] : ['--root-public-key', rootPublicKey];
}
