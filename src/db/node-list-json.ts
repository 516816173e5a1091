// GET /api/nodes, rendered by the database as the answer's JSON text: the list of a user with many
// nodes and builds is one document of ~140 KiB (a page of 100, ~30 KiB), and reading it as rows,
// building the API objects (nodes/present.ts) and serializing them again cost the API more than
// the query itself (a page of 100 took ~5 ms of CPU that way). Here PostgreSQL (or PGlite) writes
// the bytes the object path sends for each node, and the route sends them as they are.
// The projection is generated from the answer's one definition (domain/node-answer.ts): one SQL
// expression per field, keyed by its name (a field added there is asked for here by the compiler),
// written in the schema's order. test/nodes/node-words-agree.test.ts holds the values to
// presentNode's, test/api/list-nodes-json.test.ts the bytes to GET /api/nodes/{id}'s.
import type { TObject } from '@sinclair/typebox';
import type { Queryable } from './database.ts';
import { BuildAnswer, NodeAnswer, StorageAnswer, VssAnswer, type ApiBuild, type ApiNode } from '../domain/node-answer.ts';

export interface NodeListJsonOptions {
  /** Where clients reach the nodes (invoke_url). */
  nodeApiUrl: string;
  /** The peer host of a node whose runtime did not report one. */
  peerHost: string;
  /** RLN's default peer port, for a node whose runtime did not report one. */
  defaultPeerPort: number;
  /** The port and scheme of nodeApiUrl (Node.port, Node.protocol). */
  nodeApiPort: number;
  nodeApiProtocol: 'https' | 'http';
  /** VSS_MAX_BYTES_PER_NODE (Node.vss.softLimitBytes). */
  vssSoftLimitBytes: number;
}

// The JSON is written by concatenation, field by field in the order of the schema (the order the
// API's serializer writes), compact like it: json_build_object and json_agg would put spaces around
// ':' and after ','. Strings go through to_json, which escapes them as JSON does.
const str = (sql: string) => `to_json(${sql})::text`;
// A column whose CHECK constraint allows only a few plain words (statuses, actions, networks)
// needs no escaping: quoted as it is, which saves most of the cost of the builds' fields.
const word = (column: string) => `('"' || ${column} || '"')`;
// Date.prototype.toISOString: UTC, milliseconds (truncated, as a Date keeps them), "Z".
const iso = (column: string) => `('"' || to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"')`;

/** An optional field of the answer: written (with its key) only `when` holds, as the object path leaves the key out otherwise. */
interface OptionalField {
  when: string;
  value: string;
}
/** The SQL text of each field's JSON value: every field of the answer, an OptionalField for the optional ones. */
type FieldsSql<T> = { [K in keyof T]-?: undefined extends T[K] ? OptionalField : string };

/** `'{' || ... || '}'` with the fields in the schema's order. */
function jsonObject<T>(schema: TObject, fields: FieldsSql<T>): string {
  const sql = fields as Record<string, string | OptionalField>;
  const parts = Object.keys(schema.properties).map((key, i) => {
    const field = sql[key]!;
    const label = `'${i === 0 ? '' : ','}"${key}":'`;
    if (typeof field === 'string') return `${label} || ${field}`;
    if (i === 0) throw new Error(`the first field of ${schema.$id} must not be optional (${key})`);
    return `CASE WHEN ${field.when} THEN ${label} || ${field.value} ELSE '' END`;
  });
  return `'{' || ${parts.join('\n  || ')} || '}'`;
}

const BUILD_JSON = jsonObject<ApiBuild>(BuildAnswer, {
  id: str(`b.node_id || '-' || b.build_number`),
  buildNumber: 'b.build_number',
  buildStatus: word('b.status'),
  buildComplete: `(b.status <> 'IN_PROGRESS')::text`,
  // domain/nodes.ts buildPhaseOf: the outcome once finished, else the step (QUEUED before the first).
  currentPhase: word(`CASE b.status WHEN 'SUCCESS' THEN 'DONE' WHEN 'FAILURE' THEN 'FAILED' ELSE coalesce(b.phase, 'QUEUED') END`),
  timestamp: iso('b.started_at'),
  action: word('b.action'),
  imageVersion: str('b.image_version'),
  finishedAt: `coalesce(${iso('b.finished_at')}, 'null')`,
  // Only when there is one (presentBuild leaves an empty or absent error out).
  error: { when: `coalesce(b.error, '') <> ''`, value: str('b.error') },
});

// The settings schema has one field: the webhook URL, a string, or none. A stored null comes out
// of the schema's serializer as "" (so it does here too).
const SETTINGS_JSON = `CASE jsonb_typeof(n.settings->'webhookUrl')
    WHEN 'string' THEN '{"webhookUrl":' || ${str(`n.settings->>'webhookUrl'`)} || '}'
    WHEN 'null' THEN '{"webhookUrl":""}'
    ELSE '{}' END`;

// $3 nodeApiUrl, $4 peerHost, $5 defaultPeerPort, $6 nodeApiPort, $7 nodeApiProtocol, $8 vssSoftLimitBytes (both queries below).
const NODE_JSON = jsonObject<ApiNode>(NodeAnswer, {
  nodeId: str('n.id'),
  name: str('n.name'),
  network: word('n.network'),
  status: word('n.status'),
  locked: 'n.locked::text',
  initialized: 'n.initialized::text',
  autoUnlock: '(n.auto_unlock_sealed IS NOT NULL)::text',
  continuousState: 'n.continuous_state::text',
  invoke_url: str(`$3::text || '/nodes/' || n.user_id || '/' || n.id || '/'`),
  port: '$6::int',
  protocol: str('$7::text'),
  settings: SETTINGS_JSON,
  builds: `'[' || coalesce((SELECT string_agg(${BUILD_JSON}, ',' ORDER BY b.build_number) FROM builds b WHERE b.node_id = n.id), '') || ']'`,
  rln_commit_id: str('n.image_version'),
  peerDNS: str('coalesce(n.peer_host, $4::text)'),
  peerPort: 'coalesce(n.peer_port, $5::int)',
  createdAt: iso('n.created_at'),
  updatedAt: iso('n.updated_at'),
  storage: `CASE WHEN n.storage_measured_at IS NULL THEN 'null' ELSE ${jsonObject<NonNullable<ApiNode['storage']>>(StorageAnswer, {
    usedBytes: 'n.storage_used_bytes',
    capacityBytes: 'n.storage_capacity_bytes',
    availableBytes: 'n.storage_available_bytes',
    measuredAt: iso('n.storage_measured_at'),
  })} END`,
  vss: `CASE WHEN n.vss_measured_at IS NULL THEN 'null' ELSE ${jsonObject<NonNullable<ApiNode['vss']>>(VssAnswer, {
    usedBytes: 'n.vss_bytes',
    softLimitBytes: '$8::bigint',
    measuredAt: iso('n.vss_measured_at'),
  })} END`,
});

/**
 * `{"nodes":[...]}` of the user's nodes, oldest first, exactly as the object path serializes it.
 * `onlyIds`: just these (a token limited to some nodes); null: every node.
 */
export async function listUserNodesJson(db: Queryable, userId: string, onlyIds: readonly string[] | null, opts: NodeListJsonOptions): Promise<string> {
  const [row] = await db.query<{ body: string }>(
    `SELECT '{"nodes":[' || coalesce(string_agg(${NODE_JSON}, ',' ORDER BY n.created_at, n.id), '') || ']}' AS body
     FROM nodes n WHERE n.user_id = $1 AND ($2::text[] IS NULL OR n.id = ANY($2::text[]))`,
    [userId, onlyIds, opts.nodeApiUrl, opts.peerHost, opts.defaultPeerPort, opts.nodeApiPort, opts.nodeApiProtocol, opts.vssSoftLimitBytes],
  );
  return row!.body;
}

/**
 * One page of the user's nodes, oldest first, each as the JSON text of its API object: the nodes
 * after `afterId` in (created_at, id) order, stable while nodes are added, at most `limit`.
 * `onlyIds` as for listUserNodesJson. Returns each node's id with its text.
 */
export async function listUserNodePageJson(
  db: Queryable,
  userId: string,
  page: { afterId?: string; limit: number; onlyIds: readonly string[] | null },
  opts: NodeListJsonOptions,
): Promise<Array<{ id: string; json: string }>> {
  return db.query<{ id: string; json: string }>(
    `SELECT n.id, ${NODE_JSON} AS json
     FROM (SELECT * FROM nodes WHERE user_id = $1
             AND ($2::text[] IS NULL OR id = ANY($2::text[]))
             AND ($9::text IS NULL OR (created_at, id) > (SELECT created_at, id FROM nodes WHERE id = $9 AND user_id = $1))
           ORDER BY created_at, id LIMIT $10) n
     ORDER BY n.created_at, n.id`,
    [userId, page.onlyIds, opts.nodeApiUrl, opts.peerHost, opts.defaultPeerPort, opts.nodeApiPort, opts.nodeApiProtocol, opts.vssSoftLimitBytes, page.afterId ?? null, page.limit],
  );
}
