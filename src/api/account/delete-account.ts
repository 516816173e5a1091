// DELETE /api/account: the owner deletes the account, confirming with their password, or without
// one with a current factor (and, while it has nodes not destroyed, with destroyNodes). What goes
// and what stays: docs/ACCOUNTS.md.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { AppError } from '../../errors.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { FactorBody } from '../factor-schemas.ts';
import type { DeletionConfirmation } from '../../accounts/account-deletion.ts';

const DeleteAccountBody = Type.Object(
  {
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "The owner's password." })),
    ...FactorBody.properties,
    destroyNodes: Type.Optional(Type.Boolean({ description: 'true: destroy every node not destroyed yet, first. Without it, such nodes refuse the deletion (409).' })),
  },
  { additionalProperties: false },
);
type DeleteAccountBody = Static<typeof DeleteAccountBody> | undefined;
// How recent a provider's sign-in confirms a deletion for someone with no password and no factor.
const FRESH_SIGN_IN_S = 10 * 60;

/** What a web session says to confirm a deletion: the key its passkey challenges are tied to, and whether a provider signed it in just now. */
export interface DeletionConfirmingSessions {
  browserKeyOf(request: FastifyRequest): string | undefined;
  freshProviderSignIn(request: FastifyRequest, seconds: number): Promise<boolean>;
}

/** `sessions`: the web UI's (absent: no passkey or provider sign-in confirms). */
export function deleteAccountRoute(app: FastifyInstance, { accountDeletion }: ApiDeps, sessions?: DeletionConfirmingSessions) {
  app.delete<{ Body: DeleteAccountBody }>(
    '/api/account',
    {
      config: { audit: { action: 'account.deleted', target: (r) => r.user?.accountId } },
      schema: {
        operationId: 'deleteAccount',
        summary: 'Delete the account',
        description:
          "Owner, with their password (403 `wrong_password`; five wrong ones in 15 minutes answer 429). An owner without a password " +
          '(signing in with an OpenID provider or a passkey) confirms with a current factor instead: `code`, `recoveryCode`, or ' +
          '`passkey` (from a web session: the answer to POST /api/me/2fa/passkey-options); 403 `wrong_second_factor`, and 409 ' +
          '`invalid_state` when they have no factor to confirm with; or, from a web session an OpenID provider signed in less than 10 ' +
          'minutes ago, with nothing more. Nodes not destroyed refuse it ' +
          '(409 `invalid_state`, details `{liveNodes, nodeIds}`) unless `destroyNodes` is true, which destroys them first. Every member\'s ' +
          'user goes at once, with their tokens, sessions and certificates; the invitations and webhook settings too. 204: deleted. ' +
          "202: the nodes are still being destroyed; the account's record goes once they are. The audit trail and usage records stay for the operator.",
        tags: ['account'],
        body: DeleteAccountBody,
        response: {
          202: Type.Object({ status: Type.Literal('deleting'), destroyingNodeIds: Type.Array(Type.String()) }),
          204: { type: 'null', description: 'Deleted.' },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      // A DELETE without a body is not validated against the schema: it carries no password either.
      if (!request.body) throw new AppError('invalid_request', 'send {"password": "..."} to confirm the deletion', { field: 'password' });
      const user = userOf(request);
      // A passkey's challenge, and a provider's sign-in, are the session's: only a request the session cookie authenticated carries them.
      const bySession = user.tokenId === '' && sessions !== undefined;
      const browserKey = bySession ? sessions.browserKeyOf(request) : undefined;
      const freshProviderSignIn = bySession && (await sessions.freshProviderSignIn(request, FRESH_SIGN_IN_S));
      const done = await accountDeletion.deleteAccount(user, request.body as DeletionConfirmation, { sourceIp: request.ip, ...(browserKey && { browserKey }), freshProviderSignIn });
      if (done.status === 'deleted') return reply.status(204).send();
      return reply.status(202).send({ status: 'deleting', destroyingNodeIds: done.destroyingNodeIds });
    },
  );
}
