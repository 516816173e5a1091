// POST /api/nodes/{id}/settings: changes a node's settings (today: its webhook URL).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, MessageBody, NodeIdParams, Settings } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const UpdateSettingsBody = Type.Object({ settings: Settings }, { additionalProperties: false });
type UpdateSettingsBody = Static<typeof UpdateSettingsBody>;

export function updateSettingsRoute(app: FastifyInstance, { nodes }: ApiDeps) {
  app.post<{ Params: NodeIdParams; Body: UpdateSettingsBody }>(
    '/api/nodes/:id/settings',
    {
      schema: {
        operationId: 'updateNodeSettings',
        summary: "Change a node's settings",
        description:
          'Sets `settings.webhookUrl` (an empty string or null removes it; a field left out is left as it is) and ' +
          '`settings.continuousState` (from the next daemon start; 409 `continuous_state_unsupported` where the release has no VSS client). ' +
          'A refused URL answers 400 naming the reason and stores nothing. Events already waiting for delivery go to the new URL; ' +
          'with the URL removed they are cancelled. 409 `node_destroyed` for a destroyed node.',
        tags: ['nodes', 'webhooks'],
        params: NodeIdParams,
        body: UpdateSettingsBody,
        response: { 200: MessageBody, ...errorResponses },
      },
    },
    async (request) => {
      // The service checks the URL before it stores anything.
      const { webhookUrl, continuousState } = request.body.settings;
      await nodes.updateSettings(userOf(request).accountId, request.params.id, { webhookUrl, continuousState });
      return { message: `Settings of node ${request.params.id} updated` };
    },
  );
}
