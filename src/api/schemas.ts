// Shared JSON schemas of the management API. They drive request validation, response
// serialisation, the TypeScript types and the OpenAPI document at once.
import { Type, type Static } from '@sinclair/typebox';
import { ERROR_CODES } from '../errors.ts';
import { ADDRESS_PATTERN } from '../rln/unlock-body.ts';
import { BUILD_ACTIONS, BUILD_PHASES, BUILD_STATUSES, NETWORKS, NODE_STATUSES } from '../domain/nodes.ts';

export const ID_PATTERN = '^[0-9a-f]{32}$';
// Printable text, not starting or ending with whitespace. Refused anywhere: C0 and C1 control
// characters (U+009B is the 8-bit terminal escape introducer: a name printed by a CLI or a log
// viewer must not drive the terminal) and the invisible bidirectional controls (U+202E and its
// kin reorder what follows, so a name could display as something else).
const CONTROLS = '\\x00-\\x1F\\x7F-\\x9F\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069';
export const NAME_PATTERN = `^[^\\s${CONTROLS}]([^${CONTROLS}]*[^\\s${CONTROLS}])?$`;

// Whole seconds from 0 to 60 (GET /api/nodes/{id}?waitFor=&timeout=): a larger wait is refused,
// not quietly cut short.
export const WAIT_SECONDS_PATTERN = '^([0-9]|[1-5][0-9]|60)$';

// A page size from 1 to 200 (list routes' `limit`).
export const PAGE_LIMIT_PATTERN = '^([1-9]|[1-9][0-9]|1[0-9][0-9]|200)$';

/** Human explanations of the patterns above, used in 400 messages instead of the raw regex. */
export const PATTERN_MEANINGS: Record<string, string> = {
  [PAGE_LIMIT_PATTERN]: 'must be a whole number from 1 to 200',
  [WAIT_SECONDS_PATTERN]: 'must be a whole number of seconds from 0 to 60',
  [ID_PATTERN]: 'must be 32 lowercase hexadecimal characters',
  [NAME_PATTERN]: 'must not contain control characters or begin or end with whitespace',
  [ADDRESS_PATTERN]: 'must be visible characters, without spaces or control characters',
};

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(ERROR_CODES.map((c) => Type.Literal(c))),
      message: Type.String(),
      requestId: Type.String(),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  { $id: 'Error', description: 'The one error body of the management API.' },
);

export const Build = Type.Object(
  {
    id: Type.String({ description: "The build's stable id: `<nodeId>-<buildNumber>`, unique across the service." }),
    buildNumber: Type.Integer({ minimum: 1, description: 'Sequence number of the build, per node.' }),
    buildStatus: Type.Union(BUILD_STATUSES.map((s) => Type.Literal(s))),
    buildComplete: Type.Boolean(),
    currentPhase: Type.Union(BUILD_PHASES.map((p) => Type.Literal(p)), {
      description:
        'What the build is doing now. QUEUED: waiting for a worker. PROVISIONING: preparing storage and the image. ' +
        'STARTING_DAEMON / REPLACING_IMAGE: starting the daemon (on the new image). WAITING_FOR_DAEMON: until it answers. ' +
        "RESTORING_BACKUP: a create from a backup, restoring it. ROLLING_BACK: the new image failed, the previous one is coming back. " +
        'STOPPING_DAEMON, DESTROYING. DONE or FAILED once finished.',
    }),
    timestamp: Type.String({ format: 'date-time', description: 'When the build started.' }),
    action: Type.Union(BUILD_ACTIONS.map((a) => Type.Literal(a))),
    imageVersion: Type.String({ description: 'The image version the build runs the node on.' }),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    error: Type.Optional(Type.String({ description: 'Why a FAILURE build failed.' })),
  },
  { $id: 'Build' },
);

export const Settings = Type.Object(
  {
    // One JSON type union rather than anyOf, so a bad value gets one clear message.
    webhookUrl: Type.Optional(
      Type.Unsafe<string | null>({
        type: ['string', 'null'],
        maxLength: 2048,
        description:
          'Where signed events about the node are POSTed (see the webhooks tag). An absolute http(s) URL of at most 2,048 characters, ' +
          'https only in production, without credentials; targets resolving to loopback, private, link-local, multicast or unspecified ' +
          'addresses are refused unless the operator allows private targets. An empty string or null removes it.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const Node = Type.Object(
  {
    nodeId: Type.String({ pattern: ID_PATTERN }),
    name: Type.String(),
    network: Type.Union(NETWORKS.map((n) => Type.Literal(n))),
    status: Type.Union(NODE_STATUSES.map((s) => Type.Literal(s)), {
      description:
        'STARTING: created or started, coming up. RUNNING: the daemon answers. IN_PROGRESS: an upgrade is replacing the image. ' +
        'PAUSED: stopped, storage kept. FAILED: a build failed and could not be rolled back. DESTROYING, DESTROYED.',
    }),
    locked: Type.Boolean({ description: 'True after every daemon start and upgrade until an unlock succeeds.' }),
    initialized: Type.Boolean({ description: 'True once the wallet was initialised (/init).' }),
    autoUnlock: Type.Boolean({
      description: 'True when the service unlocks the node itself after every daemon start (PUT /api/nodes/{id}/auto-unlock); the password it keeps sealed is never shown.',
    }),
    invoke_url: Type.String({ format: 'uri', description: 'Bearer-token access to the node; append an RLN route.' }),
    port: Type.Integer({
      minimum: 1,
      maximum: 65535,
      description: "The TCP port of invoke_url: where a client reaches the node's API through the service (the bearer gateway). Lightning peers use peerPort.",
    }),
    protocol: Type.Union([Type.Literal('https'), Type.Literal('http')], { description: 'The scheme of invoke_url.' }),
    settings: Type.Object({ webhookUrl: Type.Optional(Type.String()) }),
    builds: Type.Array(Type.Ref(Build), { description: 'Build history, oldest first.' }),
    rln_commit_id: Type.String({ description: 'The image version the node runs.' }),
    peerDNS: Type.String({ description: 'Host Lightning peers connect to.' }),
    peerPort: Type.Integer(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    storage: Type.Union(
      [
        Type.Object({
          usedBytes: Type.Integer({ description: "Bytes the node's files take: its storage, the backups kept through the node gateways, and (process runtime) its logs." }),
          capacityBytes: Type.Integer({ description: "The size of the file system they are on: the node's volume on Kubernetes, DATA_DIR's file system on the process runtime." }),
          availableBytes: Type.Integer({ description: 'Bytes still free on that file system.' }),
          measuredAt: Type.String({ format: 'date-time', description: 'When it was measured (every NODE_STORAGE_CHECK_INTERVAL_MS while the node runs).' }),
        }),
        Type.Null(),
      ],
      { description: 'Storage use as last measured; null until the node has run long enough to be measured once.' },
    ),
    vss: Type.Union(
      [
        Type.Object({
          usedBytes: Type.Integer({ description: "Bytes of the values in the node's VSS store (its channel state kept by the service, docs/VSS.md)." }),
          softLimitBytes: Type.Integer({
            description: 'VSS_MAX_BYTES_PER_NODE: past it the operator is alerted and this page says so; writes are never refused (a refused write would stall the channels).',
          }),
          measuredAt: Type.String({ format: 'date-time', description: 'When it was measured (every few minutes).' }),
        }),
        Type.Null(),
      ],
      { description: 'What the node\'s VSS store holds, as last measured; null while the node has no store or it was not measured yet.' },
    ),
  },
  { $id: 'Node' },
);

export const NodeIdParams = Type.Object({
  id: Type.String({ pattern: ID_PATTERN, description: 'Node id: 32 lowercase hex characters.' }),
});
export type NodeIdParams = Static<typeof NodeIdParams>;

export const MessageBody = Type.Object({ message: Type.String() });

export const errorResponses = {
  400: Type.Ref(ErrorBody),
  401: Type.Ref(ErrorBody),
  404: Type.Ref(ErrorBody),
  409: Type.Ref(ErrorBody),
};

/** The paging parameters every list takes: `limit` (1-200) and the `cursor` its last page answered. */
export const pageParams = (what: string, defaultLimit: string) => ({
  limit: Type.Optional(Type.String({ pattern: PAGE_LIMIT_PATTERN, description: `${what} per page, 1-200; ${defaultLimit}.` })),
  cursor: Type.Optional(Type.String({ maxLength: 300, description: 'The nextCursor of the previous page.' })),
});

/** A page's link to the next: null after the last page. */
export const NextCursor = Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null after the last.' });
