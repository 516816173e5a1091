// The hosted VSS (docs/VSS.md): each node reaches it at its own URL,
// `{PUBLIC_URL}/vss/<node id>/<credential>`, and signs every request like LDK's clients ("sigs").
// The URL says which node's store; the first key that writes there is bound to it, and only that
// key may use the store after: a store belongs to one node of one account.
import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../db/database.ts';
import { bindVssKey, findVssStore, upsertSealedVssStore, upsertVssStore } from '../db/vss.ts';
import type { UnlockSeal } from '../secrets/unlock-seal.ts';
import { VssError, VssErrorCode } from './messages.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { VssBlobValues } from './blob-values.ts';
import type { SigsVerifier } from './sigs-auth.ts';
import { isSingleWrite, VssStoreService, type PutRequest } from './store-service.ts';

export const VSS_PATH = '/vss';

/** The sealed form of a node's URL credential (vss_stores.sealed_credential, migration 0040). */
export const vssCredentialContext = (nodeId: string) => `vss-url-credential:${nodeId}`;
export const sealVssCredential = (seal: UnlockSeal, nodeId: string, credential: string) => seal.seal(credential, vssCredentialContext(nodeId));

export const hashCredential = (credential: string) => createHash('sha256').update(credential).digest('hex');

export interface VssCaller {
  nodeId: string;
}

/** What the VSS routes report (metrics/service-metrics.ts). */
export interface VssMetrics {
  vssAnswered(operation: string, outcome: 'ok' | 'conflict' | 'invalid' | 'no_such_key' | 'refused' | 'error', seconds: number, writtenBytes: number): void;
  vssRefused(reason: VssAuthReason): void;
  /** A group commit's statement committed this many writes (vss/write-group.ts). */
  vssWriteGroup(writes: number): void;
}

export class VssService {
  readonly stores: VssStoreService;
  readonly metrics: VssMetrics | undefined;

  constructor(
    private readonly opts: {
      db: Database;
      publicUrl: string;
      verifier: SigsVerifier;
      blobs: BlobStore;
      metrics?: VssMetrics;
      /** Given: the credential is kept sealed too, so the node's daemon is started with this URL (node-urls.ts). */
      seal?: UnlockSeal;
    },
  ) {
    this.metrics = opts.metrics;
    this.stores = new VssStoreService(opts.db, new VssBlobValues(opts.blobs), (writes) => opts.metrics?.vssWriteGroup(writes));
  }

  /**
   * A new VSS URL for the node (its store made if it has none, keeping its rows and bound key);
   * an earlier URL of the node stops working. For the node's configuration (--vss-url).
   */
  async issueUrl(accountId: string, nodeId: string): Promise<string> {
    const credential = randomBytes(24).toString('base64url');
    if (this.opts.seal) await upsertSealedVssStore(this.opts.db, nodeId, hashCredential(credential), sealVssCredential(this.opts.seal, nodeId, credential));
    else await upsertVssStore(this.opts.db, nodeId, accountId, hashCredential(credential));
    return `${this.opts.publicUrl}${VSS_PATH}/${nodeId}/${credential}`;
  }

  /**
   * Who is calling: the URL's store, the signed key, and (`writing`) the key bound by this call
   * when none is yet. Every refusal is AUTH, with a reason for the log and metrics.
   */
  async authenticate(nodeId: string, credential: string, authorization: string | undefined, writing: boolean): Promise<VssCaller> {
    return this.authorize(nodeId, credential, this.signedKey(authorization), writing);
  }

  /**
   * A putObjects. The common one, a single write by the key already bound to a store, is one
   * statement (an unconditional one shared with other writes by group commit, write-group.ts,
   * each row under its own grant): the write checks the URL's credential, the bound key and the node's status itself
   * (db/vss.ts VssGrant), in its own snapshot, so no replica can accept what a fresh read would
   * refuse, and no read comes before it. Anything else (a conflict, a first write that binds the
   * key, a refusal, a put of several items) is authenticated as every request is, and then put.
   */
  async putObjects(nodeId: string, credential: string, authorization: string | undefined, req: PutRequest): Promise<VssCaller> {
    const pubkey = this.signedKey(authorization);
    if (isSingleWrite(req)) {
      const grant = { credentialHash: hashCredential(credential), pubkey };
      const done = await this.stores.put(nodeId, req, grant).catch(async (err: unknown) => {
        // A refused caller is told so before being told its put is invalid, as when every
        // request was authenticated first.
        if (err instanceof VssError && err.code === VssErrorCode.INVALID_REQUEST) await this.authorize(nodeId, credential, pubkey, true);
        throw err;
      });
      if (done) return { nodeId };
    }
    const caller = await this.authorize(nodeId, credential, pubkey, true);
    await this.stores.put(caller.nodeId, req);
    return caller;
  }

  /** The key that signed the Authorization header, or an AUTH refusal. */
  private signedKey(authorization: string | undefined): string {
    const checked = this.opts.verifier.check(authorization);
    if (!checked.ok) throw new VssAuthError(checked.reason);
    return checked.pubkey;
  }

  private async authorize(nodeId: string, credential: string, pubkey: string, writing: boolean): Promise<VssCaller> {
    const store = await findVssStore(this.opts.db, nodeId, hashCredential(credential));
    if (!store) throw new VssAuthError('unknown_store');
    if (store.node_status === 'DESTROYED' || store.node_status === 'DESTROYING') throw new VssAuthError('node_destroyed');
    let bound = store.pubkey;
    if (bound === null && writing) bound = await bindVssKey(this.opts.db, nodeId, pubkey);
    // An unbound store holds nothing: reads of it are answered (empty) for any signed key.
    if (bound !== null && bound !== pubkey) throw new VssAuthError('other_key');
    return { nodeId: store.node_id };
  }
}

export type VssAuthReason = 'malformed' | 'stale' | 'bad_signature' | 'unknown_store' | 'node_destroyed' | 'other_key';

const AUTH_MESSAGES: Record<VssAuthReason, string> = {
  malformed: 'the Authorization header is not a sigs token (key, signature, time)',
  stale: 'the signed time is more than a day from the server clock',
  bad_signature: 'the signature does not verify for the key and time',
  unknown_store: 'no VSS store at this URL',
  node_destroyed: "this URL's node is destroyed",
  other_key: "another key is bound to this URL's store",
};

export class VssAuthError extends VssError {
  constructor(readonly reason: VssAuthReason) {
    super(VssErrorCode.AUTH, AUTH_MESSAGES[reason]);
  }
}
