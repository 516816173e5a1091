// Passkeys over HTTP, for web sessions like the other factors (two-factor-routes.ts): a person
// lists, enrols, renames and removes theirs under /api/me/passkeys (removing one takes a current
// factor), and signs in without a password through POST /api/session/passkey/options and POST
// /api/session/passkey. The options are WebAuthn's JSON forms, for
// PublicKeyCredential.parseCreationOptionsFromJSON / parseRequestOptionsFromJSON or a library such
// as @simplewebauthn/browser; the answers are the credentials' toJSON().
import { createHash, randomBytes } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { AppError } from '../errors.ts';
import { errorResponses } from '../api/schemas.ts';
import { CSRF_HEADER, parseCookies, type SessionStage, type WebSessions } from './sessions.ts';
import type { FactorInput, Person, TwoFactor } from '../accounts/two-factor.ts';
import { Base64Url as B64, FactorBody, PasskeyAssertion } from '../api/factor-schemas.ts';

const tags = ['two factors'];
const errors = { ...errorResponses, 403: errorResponses[401], 429: errorResponses[401] };
// The browser's half of a password-less sign-in's challenge: the challenge is handed to whoever
// holds this cookie, so an answer signed in another browser (a phished one) does not sign this one in.
const SIGN_IN_COOKIE = 'rlnc_passkey';
const SIGN_IN_PATH = '/api/session/passkey';

const PasskeyRegistration = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 1024 }),
    rawId: Type.String({ minLength: 1, maxLength: 1024 }),
    type: Type.Literal('public-key'),
    response: Type.Object({ clientDataJSON: B64, attestationObject: B64, transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 })) }),
    clientExtensionResults: Type.Optional(Type.Object({})),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { description: "The new credential's toJSON() (navigator.credentials.create answering the registration options)." },
);
const Name = Type.String({ minLength: 1, maxLength: 64, description: 'Yours to tell your passkeys apart ("Laptop", "YubiKey").' });
const RegisterBody = Type.Object({ name: Type.Optional(Name), response: PasskeyRegistration }, { additionalProperties: false });
type RegisterBody = Static<typeof RegisterBody> | undefined;
const RenameBody = Type.Object({ name: Name }, { additionalProperties: false });
type RenameBody = Static<typeof RenameBody> | undefined;
const SignInBody = Type.Object({ response: PasskeyAssertion }, { additionalProperties: false });
type SignInBody = Static<typeof SignInBody> | undefined;
const IdParams = Type.Object({ id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) });
const Passkey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
const Options = Type.Object({ challenge: Type.String() }, { additionalProperties: true, description: 'WebAuthn options in their JSON form.' });
const SignedIn = Type.Object({
  user: Type.Object({ id: Type.String(), email: Type.String(), plan: Type.String() }),
  csrfToken: Type.String({ description: `Send it back in the ${CSRF_HEADER} header on every POST, PUT, PATCH and DELETE.` }),
});
const needsHostName =
  ' 409 `passkeys_need_host_name` where PUBLIC_URL\'s host is an IP address (browsers refuse passkeys there).';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export function passkeyRoutes(app: FastifyInstance, opts: { sessions: WebSessions; twoFactor: TwoFactor; requireOwnOrigin: (request: FastifyRequest) => void }) {
  const { sessions, twoFactor } = opts;
  const secure = sessions.cookieName.startsWith('__Host-');
  const signInCookie = (value: string, maxAge: number) =>
    `${SIGN_IN_COOKIE}=${value}; Path=${SIGN_IN_PATH}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

  /** The request's person and their session's key, from a session at one of `stages` (CSRF checked on changes). */
  const personOf = async (request: FastifyRequest, stages: SessionStage[]) => {
    const session = await sessions.anyStageOf(request);
    if (!session) throw new AppError('unauthorized', 'not signed in');
    if (!stages.includes(session.stage)) {
      if (session.stage === 'second_factor') throw new AppError('second_factor_required', 'finish signing in with your second factor first');
      throw new AppError('two_factor_enrolment_required', 'your account requires two factors: enrol an authenticator or a passkey first');
    }
    const person: Person = { id: session.id, email: session.email, accountId: session.accountId };
    return { person, session, browserKey: sessions.browserKeyOf(request)! };
  };

  app.get(
    '/api/me/passkeys',
    {
      schema: {
        operationId: 'listPasskeys',
        summary: 'Your passkeys',
        tags,
        security: [],
        response: { 200: Type.Object({ data: Type.Array(Passkey), available: Type.Boolean({ description: 'False where PUBLIC_URL\'s host is an IP address.' }) }), ...errors },
      },
    },
    async (request, reply) => {
      const { person } = await personOf(request, ['full', 'enrol']);
      noStore(reply);
      const passkeys = twoFactor.requirePasskeys();
      return { data: await passkeys.list(person.id), available: passkeys.available };
    },
  );

  app.post(
    '/api/me/passkeys/registration-options',
    {
      schema: {
        operationId: 'passkeyRegistrationOptions',
        summary: 'Start enrolling a passkey: options for navigator.credentials.create()',
        description: 'The challenge is for this session only, used once, and expires after 5 minutes.' + needsHostName,
        tags,
        security: [],
        response: { 200: Options, ...errors },
      },
    },
    async (request, reply) => {
      const { person, browserKey } = await personOf(request, ['full', 'enrol']);
      noStore(reply);
      return twoFactor.requirePasskeys().registrationOptions(person, browserKey);
    },
  );

  app.post<{ Body: RegisterBody }>(
    '/api/me/passkeys',
    {
      schema: {
        operationId: 'registerPasskey',
        summary: "Enrol a passkey: the authenticator's answer to the registration options",
        description:
          'A passkey is a second factor beside an authenticator app, and signs in without a password. A session that had to enrol ' +
          'becomes a full one: a new session cookie is set, and the new CSRF token is in the answer.' + needsHostName,
        tags,
        security: [],
        body: RegisterBody,
        response: { 201: Type.Object({ ...Passkey.properties, csrfToken: Type.Optional(Type.String()) }), ...errors },
      },
    },
    async (request, reply) => {
      const { person, session, browserKey } = await personOf(request, ['full', 'enrol']);
      if (!request.body) throw new AppError('invalid_request', 'send {"response": <the new credential as JSON>, "name": "…"}', { field: 'response' });
      const name = request.body.name?.trim() || 'Passkey';
      const passkey = await twoFactor.addPasskey(person, request.body.response as RegistrationResponseJSON, name, { sourceIp: request.ip, browserKey });
      noStore(reply).status(201);
      if (session.stage !== 'enrol') return passkey;
      const { sessionId, csrfToken } = await sessions.advance(request, 'full');
      sessions.setCookie(reply, sessionId);
      return { ...passkey, csrfToken };
    },
  );

  app.patch<{ Params: { id: string }; Body: RenameBody }>(
    '/api/me/passkeys/:id',
    {
      schema: { operationId: 'renamePasskey', summary: 'Rename one of your passkeys', tags, security: [], params: IdParams, body: RenameBody, response: { 200: Passkey, ...errors } },
    },
    async (request) => {
      const { person } = await personOf(request, ['full']);
      if (!request.body) throw new AppError('invalid_request', 'send {"name": "…"}', { field: 'name' });
      return twoFactor.renamePasskey(person, request.params.id, request.body.name.trim() || 'Passkey', request.ip);
    },
  );

  app.delete<{ Params: { id: string }; Body: Static<typeof FactorBody> | undefined }>(
    '/api/me/passkeys/:id',
    {
      schema: {
        operationId: 'removePasskey',
        summary: 'Remove one of your passkeys, with a current factor',
        description:
          'A current factor: `code` or `recoveryCode` of your authenticator app, or `passkey`, the answer of any of your passkeys ' +
          '(this one too) to POST /api/me/2fa/passkey-options. 409 `invalid_state` while the account requires two factors and it is your last.',
        tags,
        security: [],
        params: IdParams,
        body: FactorBody,
        response: { 204: { type: 'null', description: 'Removed.' }, ...errors },
      },
    },
    async (request, reply) => {
      const { person, browserKey } = await personOf(request, ['full']);
      if (!request.body) throw new AppError('invalid_request', 'send a current factor (code, recoveryCode or passkey) to remove a passkey');
      await twoFactor.removePasskey(person, request.params.id, request.body as FactorInput, { sourceIp: request.ip, browserKey });
      return reply.status(204).send();
    },
  );

  app.post(
    `${SIGN_IN_PATH}/options`,
    {
      schema: {
        operationId: 'passkeySignInOptions',
        summary: 'Start a sign-in without a password: options for navigator.credentials.get()',
        description:
          'Names no credential: the browser offers the passkeys it holds for this site (they are discoverable). Sets a short-lived ' +
          'cookie the challenge is tied to; expires after 5 minutes. 429 with 20 unfinished from one client address.' + needsHostName,
        tags: ['session (web UI)'],
        security: [],
        response: { 200: Options, ...errors },
      },
    },
    async (request, reply) => {
      opts.requireOwnOrigin(request);
      const nonce = randomBytes(32).toString('base64url');
      const options = await twoFactor.requirePasskeys().signInOptions(sha256(nonce), request.ip);
      reply.header('set-cookie', signInCookie(nonce, 300));
      noStore(reply);
      return options;
    },
  );

  app.post<{ Body: SignInBody }>(
    SIGN_IN_PATH,
    {
      schema: {
        operationId: 'signInWithPasskey',
        summary: 'Sign in with a passkey, without a password',
        description:
          "The passkey's answer to POST /api/session/passkey/options, from the same browser. Its authenticator must verify its user " +
          "(a PIN, a fingerprint): the passkey is then two factors, and satisfies an owner's rule. Failures count with the " +
          'password sign-ins of the client address (429). Sets the session cookie.' + needsHostName,
        tags: ['session (web UI)'],
        security: [],
        body: SignInBody,
        response: { 200: SignedIn, ...errors },
      },
    },
    async (request, reply) => {
      opts.requireOwnOrigin(request);
      if (!request.body) throw new AppError('invalid_request', "send {\"response\": <the passkey's answer as JSON>}", { field: 'response' });
      const nonce = parseCookies(request.headers.cookie).get(SIGN_IN_COOKIE);
      reply.header('set-cookie', signInCookie('', 0));
      if (!nonce || !/^[A-Za-z0-9_-]{43}$/.test(nonce)) throw new AppError('unauthorized', 'this sign-in was not started in this browser (or took over 5 minutes); start again');
      const { sessionId, csrfToken, user } = await sessions.signInWithPasskey(sha256(nonce), request.body.response as AuthenticationResponseJSON, request.ip, request.headers['user-agent']);
      sessions.setCookie(reply, sessionId);
      noStore(reply);
      return { user: { id: user.id, email: user.email, plan: user.plan }, csrfToken };
    },
  );
}
