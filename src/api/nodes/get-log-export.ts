// GET /api/nodes/{id}/logs?taskId=: the state of an export and, once finished, its download URLs.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, ID_PATTERN, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const GetLogExportQuery = Type.Object(
  { taskId: Type.String({ pattern: ID_PATTERN, description: 'The taskId POST /api/nodes/{id}/logs answered.' }) },
  { additionalProperties: false },
);
type GetLogExportQuery = Static<typeof GetLogExportQuery>;

const Urls = Type.Array(Type.String({ format: 'uri' }), {
  description: 'Presigned download URLs, one per gzip part, in order; fresh on every call.',
});

export const LogExportState = Type.Object(
  {
    status: Type.Union([Type.Literal('IN_PROGRESS'), Type.Literal('SUCCEEDED'), Type.Literal('FAILED')]),
    data: Urls,
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the URLs in data stop working (SUCCEEDED only).' })),
    error: Type.Optional(
      Type.Object(
        { code: Type.String({ description: 'export_failed or export_timed_out.' }), message: Type.String() },
        { description: 'Why the export failed (FAILED only).' },
      ),
    ),
  },
  { description: 'Every answer carries status; data holds URLs only when SUCCEEDED.' },
);

export function getLogExportRoute(app: FastifyInstance, { logExports }: ApiDeps) {
  app.get<{ Params: NodeIdParams; Querystring: GetLogExportQuery }>(
    '/api/nodes/:id/logs',
    {
      schema: {
        operationId: 'getLogExport',
        summary: 'The state of a log export, with download URLs once finished',
        description:
          '200 {status: "SUCCEEDED", data: [url, ...], expiresAt}: every part of the gzip archive, each URL valid for ' +
          'LOG_EXPORT_URL_TTL_SECONDS (asking again gives fresh URLs). 202 {status: "IN_PROGRESS", data: []}. ' +
          '200 {status: "FAILED", data: [], error: {code, message}}. An unknown task, one of another node or another ' +
          "user's answers 404 log_export_not_found; exports are deleted after LOG_EXPORT_RETENTION_HOURS.",
        tags: ['logs'],
        params: NodeIdParams,
        querystring: GetLogExportQuery,
        response: { 200: LogExportState, 202: LogExportState, ...errorResponses },
      },
    },
    async (request, reply) => {
      const answer = await logExports.getExport(userOf(request).accountId, request.params.id, request.query.taskId);
      return reply.status(answer.status === 'IN_PROGRESS' ? 202 : 200).send(answer);
    },
  );
}
