// PUT /api/nodes/{id}/auto-unlock {password}: the service keeps the node's password sealed and
// unlocks the node itself after every daemon start. DELETE turns that off and erases the password.
// The password is checked against the node first (nodes/unlock/auto-unlock.ts says how); it is never
// shown again, logged or echoed.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, ErrorBody, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { nodeParam } from '../audit-route.ts';
import { withPasswordBodies } from './password-body.ts';

const AutoUnlockBody = Type.Object(
  {
    password: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: "The node's wallet password: checked against the node, then kept sealed (never shown, logged or stored in clear).",
    }),
  },
  { additionalProperties: false },
);
type AutoUnlockBody = Static<typeof AutoUnlockBody>;

const AutoUnlockAnswer = Type.Object({
  data: Type.Object({
    nodeId: Type.String(),
    autoUnlock: Type.Boolean({ description: 'Whether the service now unlocks the node after every daemon start.' }),
    passwordChecked: Type.Boolean({
      description:
        'Whether the node checked the password now. False when it was unlocked already (RLN checks a password only while locked): ' +
        'it is checked at the next daemon start, and a wrong one turns automatic unlock off with a NODE_AUTO_UNLOCK_DISABLED event.',
    }),
    locked: Type.Boolean({ description: 'The node as recorded after the request.' }),
  }),
  message: Type.String(),
});

export function autoUnlockRoutes(app: FastifyInstance, { autoUnlock }: ApiDeps) {
  withPasswordBodies(app, (scope) => {
    scope.put<{ Params: NodeIdParams; Body: AutoUnlockBody }>(
      '/api/nodes/:id/auto-unlock',
      {
        config: { audit: { action: 'node.auto_unlock.enabled', target: nodeParam } },
        schema: {
          operationId: 'enableAutoUnlock',
          summary: 'Turn automatic unlock on',
          description:
            "Keeps the node's password sealed (AES-256-GCM under a key that is not in the database) and unlocks the node after every " +
            'daemon start: start, upgrade, rollout, rollback, a restart by the service. The node checks the password first: a locked ' +
            'node is unlocked with it (and stays unlocked); a node that is unlocked already cannot check it, so it is stored and ' +
            'checked at the next start (`passwordChecked: false`). Again with another password replaces it. 403 `wrong_password` ' +
            '(nothing stored); 409 `node_not_running` (the node must be RUNNING), `node_destroyed`, `node_state_conflict` (no wallet ' +
            'yet: initialise it first); 502 `node_unreachable`, `node_error`; 504 `node_timeout`.',
          tags: ['nodes'],
          params: NodeIdParams,
          body: AutoUnlockBody,
          response: { 200: AutoUnlockAnswer, ...errorResponses, 403: Type.Ref(ErrorBody), 502: Type.Ref(ErrorBody), 504: Type.Ref(ErrorBody) },
        },
      },
      async (request) => {
        const data = await autoUnlock.enable(userOf(request).accountId, request.params.id, request.body.password);
        const message = data.passwordChecked
          ? `Automatic unlock is on for node ${data.nodeId}; the node took the password and is unlocked`
          : `Automatic unlock is on for node ${data.nodeId}; the node is unlocked already, so the password is checked at its next start`;
        return { data, message };
      },
    );
  });

  app.delete<{ Params: NodeIdParams }>(
    '/api/nodes/:id/auto-unlock',
    {
      config: { audit: { action: 'node.auto_unlock.disabled', target: nodeParam } },
      schema: {
        operationId: 'disableAutoUnlock',
        summary: 'Turn automatic unlock off',
        description: 'Erases the sealed password; the node is unlocked by hand again after each start. Answers the same when it is off already.',
        tags: ['nodes'],
        params: NodeIdParams,
        response: { 200: AutoUnlockAnswer, ...errorResponses },
      },
    },
    async (request) => {
      const data = await autoUnlock.disable(userOf(request).accountId, request.params.id);
      return { data, message: `Automatic unlock is off for node ${data.nodeId}; its sealed password is erased` };
    },
  );
}
