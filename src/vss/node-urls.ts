// The VSS URL a node's daemon is started with (`--vss-url`, issue #43): the node's own URL
// (`<VSS_NODE_URL or PUBLIC_URL>/vss/<node id>/<credential>`, vss-service.ts), the same at every
// start. The credential is kept sealed with the unlock seal (migration 0040): a new one at every
// start would cut off the URL of a daemon still running and, on Kubernetes, change the pod's spec
// each time. A credential no key of the seal opens any more (a key lost) is replaced by a new one.
import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { deleteVssFence, findSealedVssCredential, listSealedVssCredentials, replaceSealedVssCredential, upsertSealedVssStore } from '../db/vss.ts';
import type { UnlockSeal } from '../secrets/unlock-seal.ts';
import type { SealedValueStore } from '../secrets/unlock-seal-keys.ts';
import { hashCredential, sealVssCredential, VSS_PATH, vssCredentialContext as associatedData } from './vss-service.ts';


/** The runtimes' NodeVssUrls (runtime/types.ts). */
export class SealedNodeVssUrls {
  constructor(private readonly opts: { db: Database; baseUrl: string; seal: UnlockSeal }) {}

  async urlFor(nodeId: string): Promise<string> {
    // Twice at most: a second miss means the node is gone (the store is made from its row).
    for (let attempt = 1; ; attempt++) {
      const sealed = await findSealedVssCredential(this.opts.db, nodeId);
      if (sealed) {
        try {
          return this.url(nodeId, this.opts.seal.open(sealed, associatedData(nodeId)));
        } catch {
          // Sealed with a key the seal no longer holds: a new credential below.
        }
      }
      // Only over what was read: a URL issued meanwhile (VssService.issueUrl) is the one to use.
      const credential = randomBytes(24).toString('base64url');
      const sealedNow = sealVssCredential(this.opts.seal, nodeId, credential);
      if (await upsertSealedVssStore(this.opts.db, nodeId, hashCredential(credential), sealedNow, sealed)) return this.url(nodeId, credential);
      if (attempt >= 2) throw new Error(`node ${nodeId} has no VSS store and none can be made (is the node gone?)`);
    }
  }

  async releaseFence(nodeId: string, writtenBefore?: Date): Promise<void> {
    await deleteVssFence(this.opts.db, nodeId, writtenBefore);
  }

  private url(nodeId: string, credential: string): string {
    return `${this.opts.baseUrl.replace(/\/+$/, '')}${VSS_PATH}/${nodeId}/${credential}`;
  }
}

/** For the unlock seal's key rotation (composition/unlock-seal.ts). */
export const VSS_URL_CREDENTIALS: SealedValueStore = {
  what: 'VSS URL credentials',
  async list(db) {
    const rows = await listSealedVssCredentials(db);
    return rows.map((r) => ({ id: r.node_id, sealed: r.sealed_credential, associatedData: associatedData(r.node_id) }));
  },
  replace: replaceSealedVssCredential,
};
