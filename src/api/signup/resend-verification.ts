// POST /api/signup/resend: public; a new verification link, the same answer for every address.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../schemas.ts';
import type { SignupService } from '../../signup/service.ts';
import { Accepted, EmailField, tags } from './schemas.ts';

const ResendBody = Type.Object({ email: EmailField }, { additionalProperties: false });
type ResendBody = Static<typeof ResendBody>;

export function resendVerificationRoute(app: FastifyInstance, signup: SignupService) {
  app.post<{ Body: ResendBody }>(
    '/api/signup/resend',
    {
      schema: {
        operationId: 'resendVerification',
        summary: 'Send the verification link again',
        description:
          'Always 202 with the same body; an address that signed up and is not verified gets a new link (earlier ones stop ' +
          'working). 429 `rate_limited` past `SIGNUP_MAX_PER_ADDRESS_PER_HOUR` per client address or 3 an hour per email address.',
        tags,
        security: [],
        body: ResendBody,
        response: { 202: Accepted, ...errorResponses },
      },
    },
    async (request, reply) => reply.status(202).send(await signup.resendVerification(request.body.email, request.ip)),
  );
}
