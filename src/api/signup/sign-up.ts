// POST /api/signup: public. With SIGNUP_MODE=open or approval, a person and an account of their own.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../schemas.ts';
import type { SignupService } from '../../signup/service.ts';
import { Accepted, EmailField, PasswordField, tags } from './schemas.ts';

const SignUpBody = Type.Object({ email: EmailField, password: PasswordField }, { additionalProperties: false });
type SignUpBody = Static<typeof SignUpBody>;

export function signUpRoute(app: FastifyInstance, signup: SignupService) {
  app.post<{ Body: SignUpBody }>(
    '/api/signup',
    {
      schema: {
        operationId: 'signUp',
        summary: 'Sign up with an email address and a password',
        description:
          'Answers 202 and the same body whether or not the address has an account: a new address gets a verification ' +
          'link (24 hours), a known one an email to its owner. Sign-in works once the address is verified (and, with ' +
          '`SIGNUP_MODE=approval`, once the operator approved the account). 403 `signup_closed` unless `SIGNUP_MODE` is ' +
          '`open` or `approval`; 400 `weak_password`; 429 `rate_limited` past `SIGNUP_MAX_PER_HOUR`, ' +
          '`SIGNUP_MAX_PER_ADDRESS_PER_HOUR` or 3 an hour per email address, with `Retry-After`.',
        tags,
        security: [],
        body: SignUpBody,
        response: { 202: Accepted, ...errorResponses },
      },
    },
    async (request, reply) => reply.status(202).send(await signup.signUp(request.body, request.ip)),
  );
}
