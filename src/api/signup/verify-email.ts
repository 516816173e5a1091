// POST /api/signup/verify: public; the emailed link's secret proves the address.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../schemas.ts';
import type { SignupService } from '../../signup/service.ts';
import { LinkTokenField, tags } from './schemas.ts';

const VerifyBody = Type.Object({ token: LinkTokenField }, { additionalProperties: false });
type VerifyBody = Static<typeof VerifyBody>;

const Verified = Type.Object({
  email: Type.String(),
  awaitingApproval: Type.Boolean({ description: 'The account still waits for the operator (SIGNUP_MODE=approval) before sign-in.' }),
});

export function verifyEmailRoute(app: FastifyInstance, signup: SignupService) {
  app.post<{ Body: VerifyBody }>(
    '/api/signup/verify',
    {
      schema: {
        operationId: 'verifyEmail',
        summary: 'Verify an email address with the emailed link',
        description:
          'Good once, for 24 hours; a newer link replaces it. An unknown, used or expired link answers 400 `invalid_link`; ' +
          'too many of those from one client address, 429 `rate_limited`.',
        tags,
        security: [],
        body: VerifyBody,
        response: { 200: Verified, ...errorResponses },
      },
    },
    async (request) => signup.verifyEmail(request.body.token, request.ip),
  );
}
