// The four VSS operations on one node's store, by the reference server's versioning rules
// (docs/VSS.md): 0 creates only, n updates only from n (to n+1), -1 writes unconditionally (to 1);
// a put is one transaction in which any item that changes nothing makes the whole put a CONFLICT;
// deleteObject of a missing key succeeds.
import type { Database } from '../db/database.ts';
import * as rows from '../db/vss.ts';
import type { VssGrant } from '../db/vss.ts';
import { VssError, VssErrorCode, type KeyValue } from './messages.ts';
import { VSS_BLOB_THRESHOLD_BYTES, type VssBlobValues } from './blob-values.ts';
import { DEFAULT_GROUP_LIMITS, VssWriteGroups } from './write-group.ts';

// The reference's limits: 1,000 items per put and 100 keys per page.
export const MAX_PUT_ITEMS = 1000;
export const MAX_PAGE_SIZE = 100;

export interface PutRequest {
  storeId: string;
  globalVersion?: number;
  transactionItems: KeyValue[];
  deleteItems: KeyValue[];
}

export interface ListRequest {
  storeId: string;
  keyPrefix?: string;
  pageSize?: number;
  pageToken?: string;
}

export interface ListResponse {
  keyVersions: Array<{ key: string; version: number }>;
  nextPageToken?: string;
  globalVersion?: number;
}

/** A put of one value and nothing else: one statement, no transaction. */
export const isSingleWrite = (req: PutRequest) => req.transactionItems.length === 1 && req.deleteItems.length === 0 && req.globalVersion === undefined;

const invalid = (message: string) => new VssError(VssErrorCode.INVALID_REQUEST, message);
const conflict = (message: string) => new VssError(VssErrorCode.CONFLICT, message);

// The reference's columns: a store id of at most 120 characters, a key of at most 600. Also
// bounded in UTF-8 bytes (three per character at most, what a two-byte script needs), so a row's
// index entry always fits PostgreSQL's B-tree (2,704 bytes): past it, a write would fail as a
// database error, not as the client's mistake it is.
export const NAME_LIMITS = { store_id: { chars: 120, bytes: 360 }, key: { chars: 600, bytes: 1200 } } as const;

// PostgreSQL text holds no NUL; a key or store id is otherwise any string the client chose.
function checkName(what: keyof typeof NAME_LIMITS, value: string) {
  if (value.length === 0) throw invalid(`${what} must not be empty`);
  if (value.includes('\u0000')) throw invalid(`${what} must not contain NUL`);
  const limit = NAME_LIMITS[what];
  if (value.length > limit.chars || Buffer.byteLength(value) > limit.bytes) throw invalid(`${what} must be at most ${limit.chars} characters (${limit.bytes} bytes of UTF-8)`);
}

function checkVersion(key: string, version: number) {
  if (!Number.isSafeInteger(version) || version < -1) throw invalid(`version of ${JSON.stringify(key)} must be -1, 0 or a positive version`);
}

export class VssStoreService {
  readonly groups: VssWriteGroups;

  constructor(
    private readonly db: Database,
    private readonly blobs: VssBlobValues,
    onGroupCommitted?: (writes: number) => void,
  ) {
    this.groups = new VssWriteGroups(db, DEFAULT_GROUP_LIMITS, onGroupCommitted);
  }

  async get(nodeId: string, storeId: string, key: string): Promise<KeyValue> {
    checkName('store_id', storeId);
    checkName('key', key);
    const row = await rows.getVssObject(this.db, nodeId, storeId, key);
    if (!row) throw new VssError(VssErrorCode.NO_SUCH_KEY, 'no such key');
    const value = row.blob_key ? await this.blobs.read(row.blob_key) : (row.value ?? new Uint8Array());
    return { key: row.key, version: row.version, value };
  }

  /**
   * Applies the put, or throws CONFLICT. With `grant` (a single write only, see isSingleWrite) it
   * applies only while the grant holds, and answers false when nothing was written: a version that
   * did not match or a grant that does not hold; the caller authenticates and puts again without
   * one, which tells the two apart.
   */
  async put(nodeId: string, req: PutRequest, grant?: VssGrant): Promise<boolean> {
    checkName('store_id', req.storeId);
    const items = [...req.transactionItems, ...req.deleteItems];
    if (items.length > MAX_PUT_ITEMS) throw invalid(`at most ${MAX_PUT_ITEMS} items in one put`);
    const seen = new Set<string>();
    for (const item of items) {
      checkName('key', item.key);
      checkVersion(item.key, item.version);
      // Two items on one key would make the outcome depend on their order.
      if (seen.has(item.key)) throw invalid(`key ${JSON.stringify(item.key)} appears twice in one put`);
      seen.add(item.key);
    }
    if (req.globalVersion !== undefined) checkVersion('global_version', req.globalVersion);
    const single = isSingleWrite(req);
    if (grant && !single) throw new Error('a grant is checked by single writes only');
    // Large values go to the blob store first; the rows name them only if the put commits.
    const written = await Promise.all(
      req.transactionItems.map(async (item) => (item.value.length > VSS_BLOB_THRESHOLD_BYTES ? this.blobs.put(nodeId, item.value) : null)),
    );
    const replaced: Array<string | null> = [];
    const write = (item: KeyValue, i: number) => {
      const blobKey = written[i]!;
      return { key: item.key, version: item.version, value: blobKey ? null : item.value, blobKey, bytes: item.value.length };
    };
    try {
      if (single) {
        // One write alone is one statement: it needs no transaction (most puts: RLN writes each key
        // as it changes), and with a grant no read before it either.
        const w = write(req.transactionItems[0]!, 0);
        // The common write (unconditional, by the bound key) is group-committed with others.
        const { applied, oldBlobKey } =
          grant && w.version === -1 ? await this.groups.write({ nodeId, storeId: req.storeId, write: w, grant }) : await rows.writeVssObject(this.db, nodeId, req.storeId, w, grant);
        if (!applied && grant) {
          await this.blobs.deleteAll(written);
          return false;
        }
        if (!applied) throw conflict(`version of ${JSON.stringify(req.transactionItems[0]!.key)} does not match`);
        replaced.push(oldBlobKey);
      } else {
        await this.db.transaction(async (tx) => {
          if (req.globalVersion !== undefined && !(await rows.moveGlobalVersion(tx, nodeId, req.storeId, req.globalVersion))) {
            throw conflict('global_version does not match');
          }
          for (const [i, item] of req.transactionItems.entries()) {
            const { applied, oldBlobKey } = await rows.writeVssObject(tx, nodeId, req.storeId, write(item, i));
            if (!applied) throw conflict(`version of ${JSON.stringify(item.key)} does not match`);
            replaced.push(oldBlobKey);
          }
          for (const item of req.deleteItems) {
            const { deleted, blobKey } = await rows.deleteVssObject(tx, nodeId, req.storeId, item.key, item.version);
            if (!deleted) throw conflict(`delete of ${JSON.stringify(item.key)} matches no key at that version`);
            replaced.push(blobKey);
          }
        });
      }
    } catch (err) {
      await this.blobs.deleteAll(written);
      throw err;
    }
    await this.blobs.deleteAll(replaced);
    return true;
  }

  async delete(nodeId: string, storeId: string, item: KeyValue): Promise<void> {
    checkName('store_id', storeId);
    checkName('key', item.key);
    checkVersion(item.key, item.version);
    const { blobKey } = await rows.deleteVssObject(this.db, nodeId, storeId, item.key, item.version);
    await this.blobs.deleteAll([blobKey]);
  }

  async list(nodeId: string, req: ListRequest): Promise<ListResponse> {
    checkName('store_id', req.storeId);
    const pageSize = req.pageSize ?? MAX_PAGE_SIZE;
    if (pageSize < 0) throw invalid('page_size must not be negative');
    const limit = Math.min(pageSize === 0 ? MAX_PAGE_SIZE : pageSize, MAX_PAGE_SIZE);
    const first = req.pageToken === undefined || req.pageToken === '';
    // The token is the last key of the page before (what the reference does too).
    const keys = await rows.listVssKeys(this.db, nodeId, req.storeId, req.keyPrefix ?? '', first ? '' : req.pageToken!, limit);
    const answer: ListResponse = { keyVersions: keys };
    if (keys.length === limit) answer.nextPageToken = keys[keys.length - 1]!.key;
    if (first) answer.globalVersion = await rows.readGlobalVersion(this.db, nodeId, req.storeId);
    return answer;
  }
}
