// VSS stores and their rows (migration 0034, vss/*.ts). Versions are bigint in the database and
// numbers here: a key would need 2^53 writes to leave the exact range.
import { preparedStatement, type Queryable } from './database.ts';

export interface VssStoreRow {
  node_id: string;
  account_id: string;
  pubkey: string | null;
  node_status: string;
}

/** Makes the node's store with this credential hash, replacing an earlier credential (a new URL). */
export async function upsertVssStore(db: Queryable, nodeId: string, accountId: string, credentialHash: string): Promise<void> {
  await db.query(
    `INSERT INTO vss_stores (node_id, account_id, credential_hash) VALUES ($1, $2, $3)
     ON CONFLICT (node_id) DO UPDATE SET credential_hash = EXCLUDED.credential_hash, sealed_credential = NULL`,
    [nodeId, accountId, credentialHash],
  );
}

/** The store whose URL carries this node id and credential, with its node's status; none when either is wrong. */
export async function findVssStore(db: Queryable, nodeId: string, credentialHash: string): Promise<VssStoreRow | undefined> {
  const [row] = await db.query<VssStoreRow>(
    `SELECT s.node_id, s.account_id, s.pubkey, n.status AS node_status
       FROM vss_stores s JOIN nodes n ON n.id = s.node_id
      WHERE s.node_id = $1 AND s.credential_hash = $2`,
    [nodeId, credentialHash],
  );
  return row;
}

/** Binds the key to the store if none is bound yet; answers the key bound now (this one or the earlier). */
export async function bindVssKey(db: Queryable, nodeId: string, pubkey: string): Promise<string> {
  await db.query('UPDATE vss_stores SET pubkey = $2, bound_at = now() WHERE node_id = $1 AND pubkey IS NULL', [nodeId, pubkey]);
  const [row] = await db.query<{ pubkey: string }>('SELECT pubkey FROM vss_stores WHERE node_id = $1', [nodeId]);
  return row!.pubkey;
}

export interface VssObjectRow {
  key: string;
  version: number;
  value: Uint8Array | null;
  blob_key: string | null;
}

export async function getVssObject(db: Queryable, nodeId: string, storeId: string, key: string): Promise<VssObjectRow | undefined> {
  const [row] = await db.query<VssObjectRow>(
    'SELECT key, version::float8 AS version, value, blob_key FROM vss_objects WHERE node_id = $1 AND store_id = $2 AND key = $3',
    [nodeId, storeId, key],
  );
  return row;
}

/**
 * Moves the store's global version by the reference's rules in one statement, its row locked to
 * the end of the transaction: `expected` 0 takes it from 0 (none yet counts as 0) to 1, n from n
 * to n+1, and -1 sets it to 1 whatever it was. Answers whether it moved (false: a CONFLICT).
 */
export async function moveGlobalVersion(db: Queryable, nodeId: string, storeId: string, expected: number): Promise<boolean> {
  const params = [nodeId, storeId];
  const rows =
    expected === -1 ?
      await db.query(
        `INSERT INTO vss_global_versions (node_id, store_id, version) VALUES ($1, $2, 1)
         ON CONFLICT (node_id, store_id) DO UPDATE SET version = 1 RETURNING version`,
        params,
      )
    : expected === 0 ?
      await db.query(
        `INSERT INTO vss_global_versions (node_id, store_id, version) VALUES ($1, $2, 1)
         ON CONFLICT (node_id, store_id) DO UPDATE SET version = 1 WHERE vss_global_versions.version = 0 RETURNING version`,
        params,
      )
      // An absent row is at 0, so it cannot match n > 0: no row to insert.
    : await db.query(
        'UPDATE vss_global_versions SET version = version + 1 WHERE node_id = $1 AND store_id = $2 AND version = $3 RETURNING version',
        [...params, expected],
      );
  return rows.length === 1;
}

export async function readGlobalVersion(db: Queryable, nodeId: string, storeId: string): Promise<number> {
  const [row] = await db.query<{ version: number }>(
    'SELECT version::float8 AS version FROM vss_global_versions WHERE node_id = $1 AND store_id = $2',
    [nodeId, storeId],
  );
  return row?.version ?? 0;
}

export interface VssWrite {
  key: string;
  /** -1 unconditional, 0 create, n update from n. */
  version: number;
  value: Uint8Array | null;
  blobKey: string | null;
  bytes: number;
}

/**
 * What a write checks in its own statement instead of a read before it (vss/vss-service.ts): the
 * URL's credential (its hash), the key the store is bound to, and a node not being destroyed.
 * Read in the statement's snapshot, so never staler than a lookup made before it.
 */
export interface VssGrant {
  credentialHash: string;
  pubkey: string;
}

// The store at the URL (node $1, credential $c) is bound to key $k and its node is not destroyed:
// what authenticate() checks (vss-service.ts), as one condition of a write statement.
const granted = (c: number, k: number) => `EXISTS (SELECT 1 FROM vss_stores s JOIN nodes n ON n.id = s.node_id
    WHERE s.node_id = $1 AND s.credential_hash = $${c} AND s.pubkey = $${k} AND n.status NOT IN ('DESTROYED', 'DESTROYING'))`;

const createObject = (grant: boolean) =>
  `INSERT INTO vss_objects (node_id, store_id, key, version, value, blob_key, bytes)
   SELECT $1, $2, $3, 1, $4::bytea, $5::text, $6::bigint${grant ? ` WHERE ${granted(7, 8)}` : ''}
   ON CONFLICT DO NOTHING RETURNING key`;

// One statement, no lock: the CTE reads the row as of the statement's start. A concurrent write
// of the same key can make the blob key read older than the one replaced: that leaves an
// orphan object (the other write's), never deletes the value the row now names.
const writeUnconditionally = (grant: boolean) =>
  `WITH old AS (SELECT blob_key FROM vss_objects WHERE node_id = $1 AND store_id = $2 AND key = $3)
   INSERT INTO vss_objects (node_id, store_id, key, version, value, blob_key, bytes)
   SELECT $1, $2, $3, 1, $4::bytea, $5::text, $6::bigint${grant ? ` WHERE ${granted(7, 8)}` : ''}
   ON CONFLICT (node_id, store_id, key) DO UPDATE SET version = 1, value = EXCLUDED.value, blob_key = EXCLUDED.blob_key,
     bytes = EXCLUDED.bytes, updated_at = now()
   RETURNING (SELECT blob_key FROM old) AS old`;

// The self-join's `o` is the row as it was before this update: its blob key is the replaced one.
const updateFromVersion = (grant: boolean) =>
  `UPDATE vss_objects n SET version = n.version + 1, value = $4, blob_key = $5, bytes = $6, updated_at = now()
     FROM vss_objects o
    WHERE n.node_id = $1 AND n.store_id = $2 AND n.key = $3 AND n.version = $${grant ? 9 : 7}
      AND o.node_id = n.node_id AND o.store_id = n.store_id AND o.key = n.key${grant ? ` AND ${granted(7, 8)}` : ''}
   RETURNING o.blob_key AS old`;

// Every channel update of a node waits on one of these: prepared once per PostgreSQL connection,
// so each write is only bound and executed (no parsing and planning per write).
const STATEMENTS = {
  create: [preparedStatement('vss_create', createObject(false)), preparedStatement('vss_create_granted', createObject(true))],
  unconditional: [preparedStatement('vss_write', writeUnconditionally(false)), preparedStatement('vss_write_granted', writeUnconditionally(true))],
  update: [preparedStatement('vss_update', updateFromVersion(false)), preparedStatement('vss_update_granted', updateFromVersion(true))],
} as const;

/**
 * One write by the reference's rules; answers the blob key it replaced (to delete) and whether it
 * applied. With a grant, it applies only if the grant holds too: not applied then means a version
 * that did not match or a grant that does not hold, which the caller tells apart.
 */
export async function writeVssObject(
  db: Queryable,
  nodeId: string,
  storeId: string,
  w: VssWrite,
  grant?: VssGrant,
): Promise<{ applied: boolean; oldBlobKey: string | null }> {
  const params: unknown[] = [nodeId, storeId, w.key, w.value, w.blobKey, w.bytes];
  if (grant) params.push(grant.credentialHash, grant.pubkey);
  const g = grant ? 1 : 0;
  if (w.version === 0) {
    const rows = await db.query(STATEMENTS.create[g], params);
    return { applied: rows.length === 1, oldBlobKey: null };
  }
  if (w.version === -1) {
    const rows = await db.query<{ old: string | null }>(STATEMENTS.unconditional[g], params);
    return { applied: rows.length === 1, oldBlobKey: rows[0]?.old ?? null };
  }
  const rows = await db.query<{ old: string | null }>(STATEMENTS.update[g], [...params, w.version]);
  return { applied: rows.length === 1, oldBlobKey: rows[0]?.old ?? null };
}

/** One write of a group (vss/write-group.ts): unconditional (version -1) and granted. */
export interface GroupedWrite {
  nodeId: string;
  storeId: string;
  write: VssWrite;
  grant: VssGrant;
}

// Several unconditional granted writes (each on its own key) as one statement, so one commit:
// each row is written only if its own grant holds, exactly as writeUnconditionally(true) would.
// The values travel as one binary parameter, cut by offset and length (a bytea[] would go as text,
// hex-escaped, twice the bytes); a null length is a value in the blob store. Rows are written in
// key order, so two groups that share keys lock them in the same order and never deadlock.
const writeGroupUnconditionally = preparedStatement(
  'vss_write_group_granted',
  `WITH w AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::int[], $6::text[], $7::bigint[], $8::text[], $9::text[])
       AS w(node_id, store_id, key, value_from, value_length, blob_key, bytes, credential_hash, pubkey)
   ), granted AS (
     SELECT w.* FROM w WHERE EXISTS (SELECT 1 FROM vss_stores s JOIN nodes n ON n.id = s.node_id
       WHERE s.node_id = w.node_id AND s.credential_hash = w.credential_hash AND s.pubkey = w.pubkey AND n.status NOT IN ('DESTROYED', 'DESTROYING'))
   ), old AS (
     SELECT o.node_id, o.store_id, o.key, o.blob_key FROM vss_objects o JOIN granted g USING (node_id, store_id, key)
   )
   INSERT INTO vss_objects (node_id, store_id, key, version, value, blob_key, bytes)
   SELECT node_id, store_id, key, 1, CASE WHEN value_length IS NULL THEN NULL ELSE substr($10::bytea, value_from, value_length) END, blob_key, bytes
     FROM granted ORDER BY node_id, store_id, key
   ON CONFLICT (node_id, store_id, key) DO UPDATE SET version = 1, value = EXCLUDED.value, blob_key = EXCLUDED.blob_key,
     bytes = EXCLUDED.bytes, updated_at = now()
   RETURNING node_id, store_id, key,
     (SELECT old.blob_key FROM old WHERE old.node_id = vss_objects.node_id AND old.store_id = vss_objects.store_id AND old.key = vss_objects.key) AS old`,
);

/**
 * Writes a group of unconditional granted writes in one statement (no two on one key): answers,
 * in the group's order, whether each applied (its grant held) and the blob key it replaced.
 */
export async function writeVssObjectGroup(db: Queryable, group: readonly GroupedWrite[]): Promise<Array<{ applied: boolean; oldBlobKey: string | null }>> {
  const columns: unknown[][] = [[], [], [], [], [], [], [], [], []];
  const values: Uint8Array[] = [];
  let from = 1; // substr counts from 1
  for (const { nodeId, storeId, write, grant } of group) {
    if (write.version !== -1) throw new Error('a group holds unconditional writes only');
    const length = write.value ? write.value.length : null;
    [nodeId, storeId, write.key, from, length, write.blobKey, write.bytes, grant.credentialHash, grant.pubkey].forEach((v, i) => columns[i]!.push(v));
    if (write.value) {
      values.push(write.value);
      from += write.value.length;
    }
  }
  const rows = await db.query<{ node_id: string; store_id: string; key: string; old: string | null }>(writeGroupUnconditionally, [...columns, Buffer.concat(values)]);
  const written = new Map(rows.map((r) => [groupKey(r.node_id, r.store_id, r.key), r.old]));
  return group.map((g) => {
    const k = groupKey(g.nodeId, g.storeId, g.write.key);
    return { applied: written.has(k), oldBlobKey: written.get(k) ?? null };
  });
}

/** A row's identity within a group (NUL cannot occur in these texts: vss/store-service.ts refuses it). */
export const groupKey = (nodeId: string, storeId: string, key: string) => `${nodeId}\u0000${storeId}\u0000${key}`;

/** Deletes a key (at `version`, or any with -1); answers whether a row went and its blob key. */
export async function deleteVssObject(db: Queryable, nodeId: string, storeId: string, key: string, version: number): Promise<{ deleted: boolean; blobKey: string | null }> {
  const rows = await db.query<{ blob_key: string | null }>(
    `DELETE FROM vss_objects WHERE node_id = $1 AND store_id = $2 AND key = $3 AND ($4::bigint = -1 OR version = $4::bigint) RETURNING blob_key`,
    [nodeId, storeId, key, version],
  );
  return { deleted: rows.length === 1, blobKey: rows[0]?.blob_key ?? null };
}

/** Keys and versions after `after` (exclusive) starting with `prefix`, in key order. */
export async function listVssKeys(db: Queryable, nodeId: string, storeId: string, prefix: string, after: string, limit: number): Promise<Array<{ key: string; version: number }>> {
  return db.query(
    `SELECT key, version::float8 AS version FROM vss_objects
      WHERE node_id = $1 AND store_id = $2 AND starts_with(key, $3) AND key COLLATE "C" > $4
      ORDER BY key COLLATE "C" LIMIT $5`,
    [nodeId, storeId, prefix, after, limit],
  );
}

/**
 * Removes the stores of nodes DESTROYED more than `hours` ago (DESTROYED_RETENTION_HOURS: the
 * node's record goes then too, and its store with it by cascade; this runs first so the blob
 * objects are deleted, not orphaned). Answers the node ids whose stores went.
 */
export async function deleteExpiredVssStores(db: Queryable, hours: number, limit: number): Promise<string[]> {
  const rows = await db.query<{ node_id: string }>(
    `DELETE FROM vss_stores WHERE node_id IN (
       SELECT s.node_id FROM vss_stores s JOIN nodes n ON n.id = s.node_id
        WHERE n.status = 'DESTROYED' AND n.destroyed_at < now() - make_interval(hours => $1) LIMIT $2)
     RETURNING node_id`,
    [hours, limit],
  );
  return rows.map((r) => r.node_id);
}

/**
 * Records on each node with a store (not destroyed) the bytes its values take now (nodes.vss_bytes)
 * and when. Answers how many nodes it measured.
 */
export async function measureVssBytes(db: Queryable): Promise<number> {
  const rows = await db.query(
    `UPDATE nodes n SET vss_bytes = t.bytes, vss_measured_at = now()
       FROM (SELECT s.node_id, coalesce(sum(o.bytes), 0) AS bytes
               FROM vss_stores s LEFT JOIN vss_objects o ON o.node_id = s.node_id GROUP BY s.node_id) t
      WHERE n.id = t.node_id AND n.status <> 'DESTROYED'
     RETURNING n.id`,
  );
  return rows.length;
}

/** Nodes (not destroyed) whose VSS store held more than `limit` bytes when last measured. */
export async function countNodesOverVssLimit(db: Queryable, limit: number): Promise<number> {
  const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM nodes WHERE status <> 'DESTROYED' AND vss_bytes > $1`, [limit]);
  return row!.n;
}

/** Bytes of values held now in the account's VSS stores (of `nodeIds` only, when given). */
export async function sumVssBytes(db: Queryable, accountId: string, nodeIds: readonly string[] | null): Promise<number> {
  const [row] = await db.query<{ bytes: number }>(
    `SELECT coalesce(sum(o.bytes), 0)::float8 AS bytes FROM vss_objects o JOIN vss_stores s ON s.node_id = o.node_id
      WHERE s.account_id = $1 AND ($2::text[] IS NULL OR o.node_id = ANY($2::text[]))`,
    [accountId, nodeIds],
  );
  return row!.bytes;
}

/** The node's sealed URL credential (migration 0040), or null when its store has none or no store. */
export async function findSealedVssCredential(db: Queryable, nodeId: string): Promise<string | null> {
  const [row] = await db.query<{ sealed_credential: string | null }>('SELECT sealed_credential FROM vss_stores WHERE node_id = $1', [nodeId]);
  return row?.sealed_credential ?? null;
}

/**
 * Makes or re-keys the node's store with this credential, keeping it sealed for the next daemon
 * start. With `unlessChangedFrom` (the sealed credential read before, or null), only if it is still
 * that one: false when another caller set one meanwhile.
 */
export async function upsertSealedVssStore(
  db: Queryable,
  nodeId: string,
  credentialHash: string,
  sealedCredential: string,
  unlessChangedFrom?: string | null,
): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO vss_stores (node_id, account_id, credential_hash, sealed_credential)
       SELECT id, user_id, $2, $3 FROM nodes WHERE id = $1
     ON CONFLICT (node_id) DO UPDATE SET credential_hash = EXCLUDED.credential_hash, sealed_credential = EXCLUDED.sealed_credential
       WHERE $4::boolean OR vss_stores.sealed_credential IS NOT DISTINCT FROM $5::text
     RETURNING node_id`,
    [nodeId, credentialHash, sealedCredential, unlessChangedFrom === undefined, unlessChangedFrom ?? null],
  );
  return rows.length > 0;
}

/** Stores with a sealed credential, for the unlock seal's key rotation. */
export async function listSealedVssCredentials(db: Queryable): Promise<Array<{ node_id: string; sealed_credential: string }>> {
  return db.query('SELECT node_id, sealed_credential FROM vss_stores WHERE sealed_credential IS NOT NULL');
}

export async function replaceSealedVssCredential(db: Queryable, nodeId: string, from: string, to: string): Promise<void> {
  await db.query('UPDATE vss_stores SET sealed_credential = $3 WHERE node_id = $1 AND sealed_credential = $2', [nodeId, from, to]);
}

/** RLN's single-writer fence key in a VSS store (devnode/vss/continuous-state.ts, docs/VSS.md). */
export const VSS_FENCE_KEY = '__rln_instance__';

/** Deletes the node's fence key in each of its stores (a tiny value, never in the blob store). */
/** Deletes the node's fence; with `writtenBefore`, only a fence written before that moment. */
export async function deleteVssFence(db: Queryable, nodeId: string, writtenBefore?: Date): Promise<void> {
  await db.query('DELETE FROM vss_objects WHERE node_id = $1 AND key = $2 AND blob_key IS NULL AND ($3::timestamptz IS NULL OR updated_at < $3)', [
    nodeId,
    VSS_FENCE_KEY,
    writtenBefore?.toISOString() ?? null,
  ]);
}
