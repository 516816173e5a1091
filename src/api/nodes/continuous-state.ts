// GET /api/nodes/{id}/continuous-state: the node's continuous state (issue #43, point 4) as the
// node page shows it: its store's last write and size from the service, and the daemon's pending
// writes from its /vssbackupinfo, asked there and then (nodes/health/continuous-state.ts).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const ContinuousStateBody = Type.Object({
  data: Type.Object({
    nodeId: Type.String(),
    enabled: Type.Boolean({ description: "The node's continuousState setting: its daemon writes its state to VSS (from its next start after a change)." }),
    store: nullable(
      Type.Object(
        {
          bound: Type.Boolean({ description: "The daemon's key is bound to the store: it has written to it." }),
          lastWriteAt: nullable(Type.String({ format: 'date-time', description: 'The last state write the store took (the single-writer fence aside); null before any.' })),
          bytes: Type.Number({ description: 'Bytes of values the store holds now.' }),
          keys: Type.Integer({ description: 'Keys the store holds now, the fence included.' }),
        },
        { description: "The node's VSS store in the service, read now; null before the node was given one." },
      ),
    ),
    daemon: Type.Object(
      {
        checked: Type.Boolean({ description: 'The daemon was asked (/vssbackupinfo): only a RUNNING, unlocked node with continuous state can answer.' }),
        reason: nullable(Type.String({ description: 'Why it was not asked, or why its answer is missing.' })),
        pendingWrites: nullable(Type.Integer({ description: "State writes the daemon made locally and not yet to VSS (pending_kv_writes); it sends them again before its next write." })),
        backupRequired: nullable(Type.Boolean({ description: 'The daemon has state VSS does not have yet (backup_required).' })),
        backupExists: nullable(Type.Boolean({ description: "The daemon finds its state in the store (backup_exists)." })),
      },
      { description: 'Asked now, within 1.5 s.' },
    ),
    checkedAt: Type.String({ format: 'date-time' }),
  }),
});

export function continuousStateRoute(app: FastifyInstance, { continuousState }: ApiDeps) {
  app.get<{ Params: NodeIdParams }>(
    '/api/nodes/:id/continuous-state',
    {
      schema: {
        operationId: 'getNodeContinuousState',
        summary: "A node's continuous state",
        description:
          "Where the node's state stands in the service's VSS: the store's last write, its size and key count (from the service's own " +
          "rows), and the writes the daemon holds that VSS does not have yet (its /vssbackupinfo, asked now when the node runs unlocked " +
          "with continuous state; a daemon that does not answer within 1.5 s is reported, never waited for). Every member may read it; " +
          "another account's node answers 404.",
        tags: ['nodes'],
        params: NodeIdParams,
        response: { 200: ContinuousStateBody, ...errorResponses },
      },
    },
    async (request) => ({ data: await continuousState.read(userOf(request).accountId, request.params.id) }),
  );
}
