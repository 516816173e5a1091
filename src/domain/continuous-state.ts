// The continuousState node setting (issue #43): on by default where the node's release supports
// it (domain/release-features.ts), refused where it does not; and what it forbids.
import { AppError } from '../errors.ts';
import type { Node } from './nodes.ts';
import { releaseFeatures } from './release-features.ts';

/** The setting for a node on `version`: the asked value, or the release's default; asking for it where unsupported is a 400. */
export function continuousStateFor(version: string, asked: boolean | undefined): boolean {
  const supported = releaseFeatures(version).vss;
  if (asked === true && !supported) {
    throw new AppError('continuous_state_unsupported', `continuous state needs a release whose RLN build writes to VSS; ${version} does not`);
  }
  return asked ?? supported;
}

/**
 * Whether an RLN backup may be restored into this node through its path (POST /restore). A node
 * that writes its state to VSS must never take one: RLN's local state always wins over what VSS
 * holds, so the restored, older state would be written over the newer state in its store. A new
 * node created from a backup is different: its store is new (a store is bound to one node), so
 * the backup's state becomes that store's first state and overwrites nothing.
 */
export function refusesBackupRestore(node: Pick<Node, 'continuousState'>): boolean {
  return node.continuousState;
}

export const RESTORE_REFUSED_MESSAGE =
  'this node writes its state to VSS (continuous state): an RLN backup restored into it would overwrite newer state with older ' +
  'state; recover it from VSS instead (initialise it with its mnemonic and unlock it), or restore the backup into a new node';
