// Whether an RLN backup may be restored into a node (issue #43). A node that writes its state to the
// service's VSS server (continuous state) must never take one: RLN's local state always wins over
// what VSS holds, so the restored, older state would be written over the newer one in VSS, and the
// channels' peers would see an old state. Asked in one place by the node path's POST /restore
// (nodes/node-paths.ts) and by a create that restores a backup (nodes/service.ts: createNode).
//
// The node setting itself (`continuousState`, on by default where the release supports it) is being
// added separately; until a node can have it, no node refuses, and this answers false. When the
// setting lands, this function reads it and nothing else changes.
import type { Node } from './nodes.ts';

export function refusesBackupRestore(node: Pick<Node, 'settings'>): boolean {
  // Read by name until NodeSettings declares it; then `node.settings.continuousState === true`.
  return (node.settings as Record<string, unknown>).continuousState === true;
}

export const RESTORE_REFUSED_MESSAGE =
  'this node writes its state to VSS (continuous state): an RLN backup restored into it would overwrite newer state with older ' +
  'state; recover it from VSS instead (initialise it with its mnemonic and unlock it)';
