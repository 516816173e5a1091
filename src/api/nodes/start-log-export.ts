// POST /api/nodes/{id}/logs: starts a durable export of the node's logs; poll GET with the taskId.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const StartLogExportBody = Type.Union(
  [
    Type.Object(
      {
        from: Type.Optional(Type.String({ format: 'date-time', description: 'Oldest daemon output to include (inclusive). Unset: the oldest kept.' })),
        to: Type.Optional(Type.String({ format: 'date-time', description: 'Newest daemon output to include (exclusive). Unset: up to the export.' })),
      },
      { additionalProperties: false },
    ),
    // No body at all is the common call (SPEC endpoint 11 takes none).
    Type.Null(),
  ],
  { description: 'Optional time range of daemon output; ISO 8601 times with a zone. Send no body, or {} for everything kept.' },
);
type StartLogExportBody = Static<typeof StartLogExportBody>;

export function startLogExportRoute(app: FastifyInstance, { logExports }: ApiDeps) {
  app.post<{ Params: NodeIdParams; Body: StartLogExportBody }>(
    '/api/nodes/:id/logs',
    {
      schema: {
        operationId: 'startLogExport',
        summary: "Export a node's logs",
        description:
          'Starts an export of the build history and the daemon output (optionally of a time range) as gzip parts. ' +
          'Poll GET /api/nodes/{id}/logs?taskId= for download URLs. One export runs per node at a time: a second one ' +
          'while it runs answers 409 log_export_in_progress with the running taskId in error.details.',
        tags: ['logs'],
        params: NodeIdParams,
        body: StartLogExportBody,
        response: { 200: Type.Object({ taskId: Type.String({ description: 'Identifies the export: 32 lowercase hex characters.' }) }), ...errorResponses },
      },
    },
    async (request) => logExports.startExport(userOf(request).accountId, request.params.id, request.body ?? {}),
  );
}
