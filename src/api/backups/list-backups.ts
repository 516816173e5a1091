// GET /api/nodes/{id}/backups: the node's backups, newest first, in pages.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NextCursor, NodeIdParams, pageParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { MAX_BACKUP_PAGE } from '../../backups/service.ts';
import { Backup } from './schemas.ts';

const ListBackupsQuery = Type.Object(pageParams('Backups', 'default 200'), { additionalProperties: false });
type ListBackupsQuery = Static<typeof ListBackupsQuery>;

export function listBackupsRoute(app: FastifyInstance, { backups }: ApiDeps) {
  app.get<{ Params: NodeIdParams; Querystring: ListBackupsQuery }>(
    '/api/nodes/:id/backups',
    {
      schema: {
        operationId: 'listBackups',
        summary: "List a node's backups",
        description:
          'Newest first, one page at a time: pass nextCursor as cursor for the next (null after the last). ' +
          'Backups are kept BACKUP_RETENTION_DAYS (the newest successful one of a live node always) and at most ' +
          'BACKUP_RETENTION_COUNT successful ones per node.',
        tags: ['backups'],
        params: NodeIdParams,
        querystring: ListBackupsQuery,
        response: {
          200: Type.Object({ backups: Type.Array(Type.Ref(Backup)), nextCursor: NextCursor }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      return backups.listBackups(userOf(request).accountId, request.params.id, limit === undefined ? MAX_BACKUP_PAGE : Number(limit), cursor);
    },
  );
}
