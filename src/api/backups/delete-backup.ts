// DELETE /api/nodes/{id}/backups/{backupId}: removes the backup and its file.
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { BackupParams } from './schemas.ts';

export function deleteBackupRoute(app: FastifyInstance, { backups }: ApiDeps) {
  app.delete<{ Params: { id: string; backupId: string } }>(
    '/api/nodes/:id/backups/:backupId',
    {
      config: { audit: { action: 'backup.deleted', target: (r) => (r.params as { backupId: string }).backupId } },
      schema: {
        operationId: 'deleteBackup',
        summary: 'Delete a backup',
        description: 'Removes the record and its encrypted file; download URLs stop working. 409 backup_in_progress while it runs.',
        tags: ['backups'],
        params: BackupParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await backups.deleteBackup(userOf(request).accountId, request.params.id, request.params.backupId);
      return reply.status(204).send();
    },
  );
}
