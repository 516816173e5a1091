// Each node's Biscuit root key (issue #40): created by the service, its public half handed to the
// node as --root-public-key, its private half sealed with the unlock seal (bound to the node id, so
// a sealed key copied onto another node's row does not open) and used only to mint tokens.
//
// A node gets one the first time the runtime starts its daemon after issue #40 (its creation, or for
// an older node its next start). Creating it restarts nothing: a daemon already running keeps the
// command line it was started with (the process runtime starts only a daemon that is not running;
// Kubernetes replaces a pod only when its image changes, the StatefulSet being OnDelete), so an
// older node keeps answering without authentication until its next restart or upgrade. Meanwhile
// the service already sends it Biscuits, which a node without --root-public-key ignores.
import type { Database } from '../db/database.ts';
import { findNodeRootKey, insertNodeRootKey, listSealedNodeRootKeys, replaceSealedNodeRootKey } from '../db/node-root-keys.ts';
import { generateRootKey } from '../rln/biscuit-mint.ts';
import type { NodeRootKeys } from '../runtime/types.ts';
import type { SealedValueStore } from './unlock-seal-keys.ts';
import type { UnlockSeal } from './unlock-seal.ts';

export const rootKeySealContext = (nodeId: string) => `node-root-key:${nodeId}`;

/** Node root keys, re-sealed by a rotation of the unlock seal's key (composition/unlock-seal.ts). */
export const NODE_ROOT_KEYS: SealedValueStore = {
  what: 'node root keys',
  async list(db) {
    const rows = await listSealedNodeRootKeys(db);
    return rows.map((r) => ({ id: r.node_id, sealed: r.sealed_private_key, associatedData: rootKeySealContext(r.node_id) }));
  },
  replace: replaceSealedNodeRootKey,
};

export class NodeRootKeyStore implements NodeRootKeys {
  constructor(private readonly deps: { db: Database; seal: Pick<UnlockSeal, 'seal' | 'open'> }) {}

  async publicKeyFor(nodeId: string): Promise<string> {
    const found = await findNodeRootKey(this.deps.db, nodeId);
    if (found) return found.public_key;
    const key = generateRootKey();
    const sealed = this.deps.seal.seal(key.privateKey.toString('hex'), rootKeySealContext(nodeId));
    await insertNodeRootKey(this.deps.db, { node_id: nodeId, public_key: key.publicKeyHex, sealed_private_key: sealed });
    // Another replica may have created one a moment before: the stored one is the node's.
    return (await findNodeRootKey(this.deps.db, nodeId))!.public_key;
  }

  /** The 32-byte private key; undefined for a node without one. Throws SealError when it does not open. */
  async privateKeyOf(nodeId: string): Promise<Buffer | undefined> {
    const found = await findNodeRootKey(this.deps.db, nodeId);
    if (!found) return undefined;
    return Buffer.from(this.deps.seal.open(found.sealed_private_key, rootKeySealContext(nodeId)), 'hex');
  }
}
