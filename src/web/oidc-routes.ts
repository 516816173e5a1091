// OpenID Connect sign-in as the browser sees it: GET /auth/oidc/<provider> sends it to the
// provider, GET /auth/oidc/callback brings it back signed in (or on a page saying why not); a
// signed-in person links (POST /api/session/oidc/<provider>/link), lists and unlinks providers.
// Outside the bearer scope like the other session routes: tokens do not link sign-in providers.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { errorResponses } from '../api/schemas.ts';
import { parseCookies, type WebSessions } from './sessions.ts';
import { OIDC_CALLBACK_PATH, type OidcSignIn } from '../oidc/service.ts';

const tags = ['session (web UI)'];
const ProviderParams = Type.Object({ provider: Type.String({ pattern: '^[a-z][a-z0-9-]{0,31}$' }) });
const Identity = Type.Object({ provider: Type.String(), label: Type.String(), email: Type.Union([Type.String(), Type.Null()]), linkedAt: Type.String({ format: 'date-time' }) });

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A page that says what happened, with a way back: the browser came here by a redirect, not by a script. */
function notice(reply: FastifyReply, status: number, title: string, message: string, code: string) {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'")
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head>` +
        `<body><main><h1>${escape(title)}</h1><p id="message" data-code="${escape(code)}">${escape(message)}</p><p><a href="/sign-in">Back to sign-in</a></p></main></body></html>`,
    );
}

// The state also rides in a cookie of the browser that started the sign-in, and the callback wants
// both: a callback URL someone else started (their code, their state) sent to a victim would
// otherwise sign the victim into that someone's account (login CSRF).
const STATE_COOKIE = 'rlnc_oidc_state';

export function oidcRoutes(app: FastifyInstance, opts: { oidc: OidcSignIn; sessions: WebSessions }) {
  const { oidc, sessions } = opts;
  const secure = sessions.cookieName.startsWith('__Host-');
  const stateCookie = (value: string, maxAge: number) =>
    `${STATE_COOKIE}=${value}; Path=${OIDC_CALLBACK_PATH}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
  /** The provider URL, with the browser's copy of its state set on `reply`. */
  const begin = async (reply: FastifyReply, providerId: string, linkUserId: string | null) => {
    const url = await oidc.start(providerId, linkUserId);
    reply.header('set-cookie', stateCookie(new URL(url).searchParams.get('state')!, 600));
    return url;
  };
  const hide = { schema: { hide: true } };
  const failed = (reply: FastifyReply, err: unknown) => {
    if (!(err instanceof AppError)) throw err;
    return notice(reply, err.status, 'Sign-in did not complete', err.message, err.code);
  };
  const signedIn = async (request: FastifyRequest) => {
    const user = await sessions.authenticate(request);
    if (!user) throw new AppError('unauthorized', 'sign in first');
    return user;
  };

  app.get(OIDC_CALLBACK_PATH, hide, async (request, reply) => {
    try {
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
      reply.header('set-cookie', stateCookie('', 0));
      const state = new URLSearchParams(query).get('state');
      if (!state || parseCookies(request.headers.cookie).get(STATE_COOKIE) !== state) {
        throw new AppError('invalid_request', 'this sign-in was not started in this browser; start again from the sign-in page');
      }
      const outcome = await oidc.callback(query, request.ip);
      if (outcome.kind === 'awaiting_approval') {
        return notice(reply, 403, 'Waiting for approval', "your account is waiting for the operator's approval; you will get an email once it is approved", 'awaiting_approval');
      }
      if (outcome.kind === 'linked') return reply.redirect('/account');
      const { sessionId, stage } = await sessions.openSession(outcome.user, request.ip, request.headers['user-agent'], {
        method: 'oidc',
        provider: outcome.provider,
        ...(outcome.amr && { amr: outcome.amr }),
        ...(outcome.acr && { acr: outcome.acr }),
      });
      sessions.setCookie(reply, sessionId);
      // A half-way session finishes where a password sign-in would: the code, or the enrolment.
      const next = stage === 'second_factor' ? '/sign-in' : stage === 'enrol' ? '/two-factor' : '/';
      return reply.header('cache-control', 'no-store').redirect(next);
    } catch (err) {
      return failed(reply, err);
    }
  });

  app.get<{ Params: { provider: string } }>('/auth/oidc/:provider', hide, async (request, reply) => {
    try {
      return reply.header('cache-control', 'no-store').redirect(await begin(reply, request.params.provider, null));
    } catch (err) {
      return failed(reply, err);
    }
  });

  app.get(
    '/api/session/oidc',
    { schema: { operationId: 'listSignInProviders', summary: 'The OpenID providers linked to the signed-in person', tags, security: [], response: { 200: Type.Object({ data: Type.Array(Identity), available: Type.Array(Type.Object({ id: Type.String(), label: Type.String() })) }), 401: errorResponses[401] } } },
    async (request) => ({ data: await oidc.list((await signedIn(request)).id), available: oidc.providers }),
  );

  app.post<{ Params: { provider: string } }>(
    '/api/session/oidc/:provider/link',
    {
      schema: {
        operationId: 'linkSignInProvider',
        summary: 'Start linking an OpenID provider to the signed-in person',
        description: 'Answers the provider URL to send the browser to; the provider redirects back to /auth/oidc/callback, which links the identity and redirects to /account.',
        tags,
        security: [],
        params: ProviderParams,
        response: { 200: Type.Object({ redirectUrl: Type.String() }), 401: errorResponses[401], 404: errorResponses[404] },
      },
    },
    async (request, reply) => ({ redirectUrl: await begin(reply, request.params.provider, (await signedIn(request)).id) }),
  );

  app.delete<{ Params: { provider: string } }>(
    '/api/session/oidc/:provider',
    {
      schema: {
        operationId: 'unlinkSignInProvider',
        summary: 'Unlink an OpenID provider from the signed-in person',
        description: 'Refused (409 invalid_state) when it is their only way in: no password and no other provider.',
        tags,
        security: [],
        params: ProviderParams,
        response: { 200: Type.Object({ message: Type.String() }), 401: errorResponses[401], 404: errorResponses[404], 409: errorResponses[409] },
      },
    },
    async (request) => {
      await oidc.unlink((await signedIn(request)).id, request.params.provider, request.ip);
      return { message: `${request.params.provider} unlinked` };
    },
  );
}
