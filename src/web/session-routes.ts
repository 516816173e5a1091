// The web UI's session: GET /api/session (who is signed in, and the CSRF token), POST /api/session
// (sign in with email and password) and DELETE /api/session (sign out). These routes sit outside
// the bearer scope: they are how a browser gets its credential in the first place.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { errorResponses } from '../api/schemas.ts';
import { CSRF_HEADER, type WebSessions } from './sessions.ts';

const SignInBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
type SignInBody = Static<typeof SignInBody>;

const SessionResponse = Type.Object({
  user: Type.Object({ id: Type.String(), email: Type.String(), plan: Type.String() }),
  csrfToken: Type.String({ description: `Send it back in the ${CSRF_HEADER} header on every POST, PUT, PATCH and DELETE.` }),
});

const SignInResponse = Type.Object({
  ...SessionResponse.properties,
  stage: Type.Union([Type.Literal('full'), Type.Literal('second_factor'), Type.Literal('enrol')], {
    description:
      '`full`: signed in. `second_factor`: send a code to POST /api/session/second-factor. `enrol`: the account requires two ' +
      'factors; enrol one under /api/me/2fa (nothing else answers this session until then).',
  }),
});

const tags = ['session (web UI)'];

/**
 * A sign-in from another site's page would sign the browser into the attacker's account (login
 * CSRF); browsers send Origin on every cross-site POST, so refuse foreign ones. The page's own
 * origin is the public URL's, or whatever host name the browser used to reach this listener.
 */
export const ownOriginCheck = (allowedOrigins: string[]) => (request: FastifyRequest) => {
  const origin = request.headers.origin;
  if (origin === undefined || allowedOrigins.includes(origin)) return;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {}
  if (host === undefined || host !== request.headers.host) {
    throw new AppError('forbidden', `requests from ${origin} are not accepted`);
  }
};

export function sessionRoutes(app: FastifyInstance, opts: { sessions: WebSessions; allowedOrigins: string[] }) {
  const { sessions } = opts;
  const requireOwnOrigin = ownOriginCheck(opts.allowedOrigins);

  app.get(
    '/api/session',
    { schema: { operationId: 'getSession', summary: 'The signed-in web user and the CSRF token', tags, security: [], response: { 200: SessionResponse, 401: errorResponses[401] } } },
    async (request, reply) => {
      const user = await sessions.userOf(request);
      // A half-way sign-in is told what it still owes (second_factor_required, two_factor_enrolment_required).
      if (!user) {
        // A sign-in that owes its code (after an OpenID provider's redirect, the page has no CSRF
        // token yet) is given the token to send it with; a cross-site page cannot read this answer.
        const halfWay = await sessions.anyStageOf(request);
        if (halfWay?.stage === 'second_factor') {
          throw new AppError('second_factor_required', 'finish signing in: send the code from your authenticator to POST /api/session/second-factor', { csrfToken: halfWay.csrfToken });
        }
        await sessions.authenticate(request);
        throw new AppError('unauthorized', 'not signed in');
      }
      reply.header('cache-control', 'no-store');
      return { user: { id: user.id, email: user.email, plan: user.plan }, csrfToken: user.csrfToken };
    },
  );

  app.post<{ Body: SignInBody }>(
    '/api/session',
    {
      schema: {
        operationId: 'signIn',
        summary: 'Sign in with email and password',
        description:
          'Sets an HttpOnly session cookie. Failed attempts are limited per email and per client address (429). With a second ' +
          'factor enrolled (or required by the account) the session opens half-way: see `stage`.',
        tags,
        security: [],
        body: SignInBody,
        response: { 200: SignInResponse, 400: errorResponses[400], 401: errorResponses[401] },
      },
    },
    async (request, reply) => {
      requireOwnOrigin(request);
      const { sessionId, csrfToken, user, stage } = await sessions.signIn(request.body.email, request.body.password, request.ip, request.headers['user-agent']);
      sessions.setCookie(reply, sessionId);
      reply.header('cache-control', 'no-store');
      return { user, csrfToken, stage };
    },
  );

  app.delete(
    '/api/session',
    { schema: { operationId: 'signOut', summary: 'Sign out', tags, security: [], response: { 200: Type.Object({ message: Type.String() }), 401: errorResponses[401] } } },
    async (request, reply) => {
      requireOwnOrigin(request);
      // Checks the CSRF token like any change; a session that already ended is simply cleared.
      // A half-way sign-in (second factor owed) can be abandoned too.
      if (await sessions.anyStageOf(request)) await sessions.signOut(request);
      sessions.clearCookie(reply);
      return { message: 'signed out' };
    },
  );
}
