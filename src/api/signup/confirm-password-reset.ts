// POST /api/password-reset/confirm: public; the emailed link's secret sets a new password.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../schemas.ts';
import type { SignupService } from '../../signup/service.ts';
import { LinkTokenField, PasswordField, tags } from './schemas.ts';

const ConfirmBody = Type.Object({ token: LinkTokenField, password: PasswordField }, { additionalProperties: false });
type ConfirmBody = Static<typeof ConfirmBody>;

const Reset = Type.Object({ email: Type.String(), message: Type.String() });

export function confirmPasswordResetRoute(app: FastifyInstance, signup: SignupService) {
  app.post<{ Body: ConfirmBody }>(
    '/api/password-reset/confirm',
    {
      schema: {
        operationId: 'confirmPasswordReset',
        summary: 'Set a new password with the emailed link',
        description:
          'Ends every web session of the person (their API tokens and certificates stay) and verifies the address. An ' +
          'unknown, used or expired link answers 400 `invalid_link`, a weak password 400 `weak_password` (the link still ' +
          'works); too many bad links from one client address, 429 `rate_limited`.',
        tags,
        security: [],
        body: ConfirmBody,
        response: { 200: Reset, ...errorResponses },
      },
    },
    async (request) => signup.confirmPasswordReset(request.body, request.ip),
  );
}
