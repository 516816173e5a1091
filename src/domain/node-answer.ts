// The Node and the Build as the API answers them (the SPEC's shapes), written once: the response
// schemas (api/schemas.ts re-exports them), the presenter's types (nodes/present.ts returns
// ApiNode and ApiBuild) and the list query's projection (db/node-list-json.ts, keyed by these
// fields and written in their order) all follow from here. A field added here is asked for by the
// compiler in the presenter and in the projection; test/nodes/node-words-agree.test.ts holds the
// three to the same values. In domain/ because db/ may import only the leaves.
import { Type, type Static } from '@sinclair/typebox';
import { BUILD_ACTIONS, BUILD_PHASES, BUILD_STATUSES, NETWORKS, NODE_STATUSES } from './nodes.ts';

export const ID_PATTERN = '^[0-9a-f]{32}$';

export const BuildAnswer = Type.Object(
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

/** A node's storage use as last measured (inside NodeAnswer.storage, or null there). */
export const StorageAnswer = Type.Object({
  usedBytes: Type.Integer({ description: "Bytes the node's files take: its storage, the backups kept through the node gateways, and (process runtime) its logs." }),
  capacityBytes: Type.Integer({ description: "The size of the file system they are on: the node's volume on Kubernetes, DATA_DIR's file system on the process runtime." }),
  availableBytes: Type.Integer({ description: 'Bytes still free on that file system.' }),
  measuredAt: Type.String({ format: 'date-time', description: 'When it was measured (every NODE_STORAGE_CHECK_INTERVAL_MS while the node runs).' }),
});

/** What a node's VSS store holds as last measured (inside NodeAnswer.vss, or null there). */
export const VssAnswer = Type.Object({
  usedBytes: Type.Integer({ description: "Bytes of the values in the node's VSS store (its channel state kept by the service, docs/VSS.md)." }),
  softLimitBytes: Type.Integer({
    description: 'VSS_MAX_BYTES_PER_NODE: past it the operator is alerted and this page says so; writes are never refused (a refused write would stall the channels).',
  }),
  measuredAt: Type.String({ format: 'date-time', description: 'When it was measured (every few minutes).' }),
});

export const NodeAnswer = Type.Object(
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
    continuousState: Type.Boolean({
      description: "True when the node's daemon writes every state change to the service's VSS (settings.continuousState at creation or later; docs/VSS.md).",
    }),
    invoke_url: Type.String({ format: 'uri', description: 'Bearer-token access to the node; append an RLN route.' }),
    port: Type.Integer({
      minimum: 1,
      maximum: 65535,
      description: "The TCP port of invoke_url: where a client reaches the node's API through the service (the bearer gateway). Lightning peers use peerPort.",
    }),
    protocol: Type.Union([Type.Literal('https'), Type.Literal('http')], { description: 'The scheme of invoke_url.' }),
    settings: Type.Object({ webhookUrl: Type.Optional(Type.String()) }),
    builds: Type.Array(Type.Ref(BuildAnswer), { description: 'Build history, oldest first.' }),
    rln_commit_id: Type.String({ description: 'The image version the node runs.' }),
    peerDNS: Type.String({ description: 'Host Lightning peers connect to.' }),
    peerPort: Type.Integer(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    storage: Type.Union(
      [
        StorageAnswer,
        Type.Null(),
      ],
      { description: 'Storage use as last measured; null until the node has run long enough to be measured once.' },
    ),
    vss: Type.Union([VssAnswer, Type.Null()], {
      description: "What the node's VSS store holds, as last measured; null while the node has no store or it was not measured yet.",
    }),
  },
  { $id: 'Node' },
);

export type ApiBuild = Static<typeof BuildAnswer>;
export type ApiNode = Static<typeof NodeAnswer>;
