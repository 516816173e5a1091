// DELETE /api/backups/uploads/{backupId}: removes one of the caller's uploaded backups and its file.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, ID_PATTERN } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const UploadParams = Type.Object({
  backupId: Type.String({ pattern: ID_PATTERN, description: 'Backup id of the upload: 32 lowercase hex characters.' }),
});

export function deleteUploadRoute(app: FastifyInstance, { backups }: ApiDeps) {
  app.delete<{ Params: { backupId: string } }>(
    '/api/backups/uploads/:backupId',
    {
      config: { audit: { action: 'backup.deleted', target: (r) => (r.params as { backupId: string }).backupId } },
      schema: {
        operationId: 'deleteUpload',
        summary: 'Delete an uploaded backup',
        description:
          'Removes the record and its file, freeing its room in your upload quota. Another user\'s upload, or a backup of a node ' +
          '(DELETE /api/nodes/{id}/backups/{backupId} deletes those), answers 404 backup_not_found. A node being restored from it ' +
          'fails its restore if the file is gone before the restore began.',
        tags: ['backups'],
        params: UploadParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await backups.deleteUpload(userOf(request).accountId, request.params.backupId);
      return reply.status(204).send();
    },
  );
}
