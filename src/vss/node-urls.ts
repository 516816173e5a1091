// The VSS URL a node's daemon is started with (`--vss-url`, issue #43): the node's own URL
// (`<VSS_NODE_URL or PUBLIC_URL>/vss/<node id>/<credential>`, vss-service.ts), the same at every
// start. The credential is kept sealed with the unlock seal (migration 0040): a new one at every
// start would cut off the URL of a daemon still running and, on Kubernetes, change the pod's spec
// each time. A credential no key of the seal opens any more (a key lost) is replaced by a new one.
import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { findSealedVssCredential, listSealedVssCredentials, replaceSealedVssCredential, upsertSealedVssStore } from '../db/vss.ts';
import type { UnlockSeal } from '../secrets/unlock-seal.ts';
import type { SealedValueStore } from '../secrets/unlock-seal-keys.ts';
import { hashCredential, VSS_PATH } from './vss-service.ts';

const associatedData = (nodeId: string) => `vss-url-credential:${nodeId}`;

/** The runtimes' NodeVssUrls (runtime/types.ts). */
export class SealedNodeVssUrls {
  constructor(private readonly opts: { db: Database; baseUrl: string; seal: UnlockSeal }) {}

  async urlFor(nodeId: string): Promise<string> {
    const sealed = await findSealedVssCredential(this.opts.db, nodeId);
    if (sealed) {
      try {
        return this.url(nodeId, this.opts.seal.open(sealed, associatedData(nodeId)));
      } catch {
        // Sealed with a key the seal no longer holds: a new credential below.
      }
    }
    const credential = randomBytes(24).toString('base64url');
    await upsertSealedVssStore(this.opts.db, nodeId, hashCredential(credential), this.opts.seal.seal(credential, associatedData(nodeId)));
    return this.url(nodeId, credential);
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
