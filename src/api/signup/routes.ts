// The public sign-up, verification and password reset routes: no credentials, the body or the
// emailed link's secret is all there is. Registered outside the bearer scope (api/server.ts).
import type { FastifyInstance } from 'fastify';
import type { SignupService } from '../../signup/service.ts';
import { signUpRoute } from './sign-up.ts';
import { verifyEmailRoute } from './verify-email.ts';
import { resendVerificationRoute } from './resend-verification.ts';
import { requestPasswordResetRoute } from './request-password-reset.ts';
import { confirmPasswordResetRoute } from './confirm-password-reset.ts';

export function signupRoutes(app: FastifyInstance, signup: SignupService) {
  signUpRoute(app, signup);
  verifyEmailRoute(app, signup);
  resendVerificationRoute(app, signup);
  requestPasswordResetRoute(app, signup);
  confirmPasswordResetRoute(app, signup);
}
