// POST /api/nodes/{id}/backups {password}: starts a backup of the node; poll GET .../{backupId}.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { nodeParam } from '../audit-route.ts';
import { withPasswordBodies } from '../nodes/password-body.ts';
import { Backup } from './schemas.ts';

const CreateBackupBody = Type.Object(
  {
    password: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: "The node's wallet password: the node encrypts the backup with it. Never stored or logged.",
    }),
  },
  { additionalProperties: false },
);
type CreateBackupBody = Static<typeof CreateBackupBody>;

export function createBackupRoute(app: FastifyInstance, { backups }: ApiDeps) {
  withPasswordBodies(app, (scope) => {
    scope.post<{ Params: NodeIdParams; Body: CreateBackupBody }>(
      '/api/nodes/:id/backups',
      {
        config: { audit: { action: 'backup.created', target: nodeParam } },
        schema: {
          operationId: 'createBackup',
          summary: 'Back up a node',
          description:
            "Starts a backup of a RUNNING node's wallet and storage, encrypted by the node with its password (RLN's /backup). " +
            'An unlocked node is locked for the backup (RLN backs up only a locked node) and unlocked again with the same ' +
            'password afterwards; if that unlock fails the record says so in unlockError. Answers 202 with the record ' +
            '(IN_PROGRESS); poll GET /api/nodes/{id}/backups/{backupId}. A wrong password ends the backup FAILED with ' +
            'error.code wrong_password (RLN cannot check a password without locking an unlocked node first). 409 ' +
            'backup_in_progress (backupId in details), node_not_running, node_not_initialized, node_destroyed.',
          tags: ['backups'],
          params: NodeIdParams,
          body: CreateBackupBody,
          response: { 202: Type.Ref(Backup), ...errorResponses },
        },
      },
      async (request, reply) => reply.status(202).send(await backups.startBackup(userOf(request).accountId, request.params.id, request.body.password)),
    );
  });
}
