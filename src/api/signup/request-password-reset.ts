// POST /api/password-reset: public; a reset link to the address, the same answer for every address.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../schemas.ts';
import type { SignupService } from '../../signup/service.ts';
import { Accepted, EmailField, tags } from './schemas.ts';

const ResetBody = Type.Object({ email: EmailField }, { additionalProperties: false });
type ResetBody = Static<typeof ResetBody>;

export function requestPasswordResetRoute(app: FastifyInstance, signup: SignupService) {
  app.post<{ Body: ResetBody }>(
    '/api/password-reset',
    {
      schema: {
        operationId: 'requestPasswordReset',
        summary: 'Email a password reset link',
        description:
          'Always 202 with the same body; an address with an account gets a link good once for an hour (earlier ones stop ' +
          'working). 429 `rate_limited` past `SIGNUP_MAX_PER_ADDRESS_PER_HOUR` per client address or 3 an hour per email address.',
        tags,
        security: [],
        body: ResetBody,
        response: { 202: Accepted, ...errorResponses },
      },
    },
    async (request, reply) => reply.status(202).send(await signup.requestPasswordReset(request.body.email, request.ip)),
  );
}
