// GET /api/backups/uploads: the caller's uploaded backups, newest first, in pages.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NextCursor, pageParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { MAX_BACKUP_PAGE } from '../../backups/service.ts';
import { Backup } from './schemas.ts';

const ListUploadsQuery = Type.Object(pageParams('Uploads', 'default 200'), { additionalProperties: false });
type ListUploadsQuery = Static<typeof ListUploadsQuery>;

export function listUploadsRoute(app: FastifyInstance, { backups }: ApiDeps) {
  app.get<{ Querystring: ListUploadsQuery }>(
    '/api/backups/uploads',
    {
      schema: {
        operationId: 'listUploads',
        summary: 'List your uploaded backups',
        description:
          'Files uploaded with POST /api/backups/uploads, newest first, one page at a time: pass nextCursor as cursor for the next ' +
          '(null after the last). They count against BACKUP_UPLOAD_QUOTA_BYTES and BACKUP_UPLOAD_QUOTA_COUNT until deleted ' +
          '(DELETE /api/backups/uploads/{backupId}) or removed by retention (BACKUP_RETENTION_DAYS).',
        tags: ['backups'],
        querystring: ListUploadsQuery,
        response: {
          200: Type.Object({ uploads: Type.Array(Type.Ref(Backup)), nextCursor: NextCursor }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      return backups.listUploads(userOf(request).accountId, limit === undefined ? MAX_BACKUP_PAGE : Number(limit), cursor);
    },
  );
}
