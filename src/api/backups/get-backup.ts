// GET /api/nodes/{id}/backups/{backupId}: the record and, once finished, a download URL.
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { BackupParams, BackupWithDownload } from './schemas.ts';

export function getBackupRoute(app: FastifyInstance, { backups }: ApiDeps) {
  app.get<{ Params: { id: string; backupId: string } }>(
    '/api/nodes/:id/backups/:backupId',
    {
      schema: {
        operationId: 'getBackup',
        summary: 'A backup, with its download URL once finished',
        description:
          'IN_PROGRESS, SUCCEEDED with downloadUrl (the encrypted file; valid BACKUP_URL_TTL_SECONDS, fresh on every call) ' +
          "and sha256 to check it against, or FAILED with error. Another user's backup, or one of another node, answers 404 backup_not_found.",
        tags: ['backups'],
        params: BackupParams,
        response: { 200: BackupWithDownload, ...errorResponses },
      },
    },
    async (request) => backups.getBackup(userOf(request).accountId, request.params.id, request.params.backupId),
  );
}
