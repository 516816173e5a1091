// POST /api/nodes: creates a node; it starts STARTING and a create build brings it to RUNNING.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, ID_PATTERN, NAME_PATTERN, Node, Settings } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { idempotencyKeyOf } from '../idempotency-key.ts';
import { withPasswordBodies } from './password-body.ts';
import { NETWORKS } from '../../domain/nodes.ts';

const CreateNodeBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: NAME_PATTERN, description: '1-64 printable characters.' }),
    network: Type.Union(NETWORKS.map((n) => Type.Literal(n))),
    settings: Type.Optional(Settings),
    restore: Type.Optional(
      Type.Object(
        {
          backupId: Type.String({ pattern: ID_PATTERN, description: 'One of your finished backups (of a node, or uploaded).' }),
          password: Type.String({ minLength: 1, maxLength: 1024, description: 'The password the backup was made with.' }),
          supersedeSource: Type.Optional(
            Type.Boolean({
              description:
                "When the backup's node (or a node its wallet was restored into since) still exists: stop it and fence it for good " +
                '(it is never started, upgraded or unlocked again; only destroy is left), so that one copy of the wallet runs. ' +
                'Without it such a restore is refused with 409 source_node_live.',
            }),
          ),
          confirmOlderBackup: Type.Optional(
            Type.Boolean({
              description:
                "Restore even though the wallet has a newer successful backup (older channel states: broadcasting one loses the channel's funds). " +
                'Without it such a restore is refused with 409 backup_older_than_source.',
            }),
          ),
        },
        {
          additionalProperties: false,
          description:
            "Create the node from a backup: once it is up, the backup is placed in its storage and the node's /restore " +
            'called; it ends RUNNING, locked, with the restored wallet (unlock it with the password). A wrong password ' +
            'or a corrupt file ends the create build FAILURE with the reason and the node FAILED. The password is kept ' +
            'sealed (UNLOCK_SEAL_KEY_FILE) only until the restore ends.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
type CreateNodeBody = Static<typeof CreateNodeBody>;

const CreateNodeResponse = Type.Object({
  data: Type.Object({
    nodeId: Type.String(),
    name: Type.String(),
    network: Type.String(),
    status: Type.Literal('STARTING'),
    node: Type.Ref(Node, { description: 'The new node as GET /api/nodes/{id} shows it (where clients of the original service read it).' }),
  }),
  message: Type.String(),
});

export function createNodeRoute(app: FastifyInstance, { nodes }: ApiDeps) {
  // The body may hold a restore password: parsed where a bad body is never quoted back.
  withPasswordBodies(app, (scope) => scope.post<{ Body: CreateNodeBody }>(
    '/api/nodes',
    {
      schema: {
        operationId: 'createNode',
        summary: 'Create a node',
        description:
          'The node starts in STARTING; a create build brings it to RUNNING (locked, not initialised). ' +
          'With an `Idempotency-Key` header (1-255 printable characters), a retry with the same key and body within 24 hours ' +
          'gets the first answer (with `Idempotent-Replayed: true`) and creates nothing; the same key with another body is 409 `idempotency_conflict`. ' +
          '`settings.webhookUrl` follows the rules of POST /api/nodes/{id}/settings. With `restore`, the node is created ' +
          'from a backup: 404 backup_not_found, 409 backup_not_ready (not SUCCEEDED), 400 for a backup of the other network, ' +
          "409 source_node_live while the wallet's node still exists (destroy it, or restore.supersedeSource: true), " +
          '409 backup_older_than_source for a backup older than the wallet\'s newest (restore.confirmOlderBackup: true), ' +
          '409 node_superseded / build_in_progress when the node to supersede cannot be stopped now.',
        tags: ['nodes'],
        body: CreateNodeBody,
        response: { 200: CreateNodeResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { name, network, settings, restore } = request.body;
      // A retry is recognised without the password: no hash of it is ever stored.
      const idempotency = idempotencyKeyOf(request, { ...request.body, restore: restore && { backupId: restore.backupId, supersedeSource: restore.supersedeSource, confirmOlderBackup: restore.confirmOlderBackup } });
      // The service checks the webhook URL (scheme, credentials, target addresses) before it stores anything.
      const { body, replayed } = await nodes.createNode(userOf(request).accountId, { name, network, settings, restore }, idempotency);
      if (replayed) reply.header('idempotent-replayed', 'true');
      return body;
    },
  ), '{"name": "...", "network": "regtest"}');
}
