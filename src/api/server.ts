// The management listener: the JSON API under /api, its OpenAPI document and docs page, and
// health. Routes are registered explicitly here, grouped by how they authenticate.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from '../logger.ts';
import { requireBearerAuth, type SessionAuthenticator } from './bearer-auth.ts';
import { answerClientError } from './client-error.ts';
import { installErrorHandlers } from './error-handler.ts';
import { lazySerializers, type LazySerializers } from './serializer-cache.ts';
import { lazyValidators, type LazyValidators } from './validator-cache.ts';
import { Build, ErrorBody, Node } from './schemas.ts';
import type { ApiDeps } from './deps.ts';
import { nodeHealthRoute } from './nodes/node-health.ts';
import { continuousStateRoute } from './nodes/continuous-state.ts';
import { initNodeRoute } from './nodes/init-node.ts';
import { isPreflight, preflightHeaders, responseCorsHeaders, type CorsPolicy } from '../http/cors.ts';
import { listNodesRoute } from './nodes/list-nodes.ts';
import { createNodeRoute } from './nodes/create-node.ts';
import { getNodeRoute } from './nodes/get-node.ts';
import { destroyNodeRoute } from './nodes/destroy-node.ts';
import { latestImageRoute } from './nodes/latest-image.ts';
import { listTokensRoute } from './tokens/list-tokens.ts';
import { getAccountRoute } from './account/get-account.ts';
import { createTokenRoute } from './tokens/create-token.ts';
import { revokeTokenRoute } from './tokens/revoke-token.ts';
import { verifyTokenRoute } from './tokens/verify-token.ts';
import { nodeActionRoutes } from './nodes/node-actions.ts';
import { startLogExportRoute } from './nodes/start-log-export.ts';
import { getLogExportRoute } from './nodes/get-log-export.ts';
import { getDownloadRoute } from './downloads/get-download.ts';
import { updateSettingsRoute } from './nodes/update-settings.ts';
import { WebhookDelivery, WebhookEvent } from './webhooks/schemas.ts';
import { webhookPublicKeyRoute } from './webhooks/public-key.ts';
import { webhookPublicKeysRoute } from './webhooks/public-keys.ts';
import { listDeliveriesRoute } from './webhooks/list-deliveries.ts';
import { redeliverRoute } from './webhooks/redeliver.ts';
import { sendTestEventRoute } from './webhooks/send-test-event.ts';
import { WEBHOOKS_OPENAPI } from './webhooks/openapi.ts';
import { API_INFO, API_TAGS } from './api-description.ts';
import { DOCS_PAGE_PATH, docsPageOptions } from './docs-page.ts';
import { unlockNodeRoute } from './nodes/unlock-node.ts';
import { certificateRoutes } from './nodes/certificates.ts';
import { nodeTokenRoutes } from './nodes/node-tokens.ts';
import { Backup } from './backups/schemas.ts';
import { createBackupRoute } from './backups/create-backup.ts';
import { exportNodeRoute } from './nodes/export-node.ts';
import { recoverNodeRoute } from './nodes/recover-node.ts';
import { listBackupsRoute } from './backups/list-backups.ts';
import { getBackupRoute } from './backups/get-backup.ts';
import { deleteBackupRoute } from './backups/delete-backup.ts';
import { uploadBackupRoute } from './backups/upload-backup.ts';
import { listUploadsRoute } from './backups/list-uploads.ts';
import { deleteUploadRoute } from './backups/delete-upload.ts';
import { auditRoutes } from './audit-route.ts';
import { limitApiRate, type ApiRateLimits } from './rate-limit-hook.ts';
import { listAuditEventsRoute } from './audit/list-audit-events.ts';
import { autoUnlockRoutes } from './nodes/auto-unlock.ts';
import { NodeEvent } from './events/schemas.ts';
import { listNodeEventsRoute } from './events/list-node-events.ts';
import { streamEventsRoute } from './events/stream-events.ts';
import { closeAfterUnreadBody } from '../http/unread-body.ts';
import { inviteMemberRoute } from './account/invite-member.ts';
import { listInvitationsRoute } from './account/list-invitations.ts';
import { revokeInvitationRoute } from './account/revoke-invitation.ts';
import { acceptInvitationRoute } from './account/accept-invitation.ts';
import { signupRoutes } from './signup/routes.ts';
import { listMembersRoute } from './account/list-members.ts';
import { changeMemberRoleRoute } from './account/change-member-role.ts';
import { removeMemberRoute } from './account/remove-member.ts';
import { leaveAccountRoute } from './account/leave-account.ts';
import { deleteAccountRoute, type DeletionConfirmingSessions } from './account/delete-account.ts';
import { offerTransferRoute } from './account/offer-transfer.ts';
import { getTransferRoute } from './account/get-transfer.ts';
import { withdrawTransferRoute } from './account/withdraw-transfer.ts';
import { acceptTransferRoute } from './account/accept-transfer.ts';
import { listSessionsRoute } from './sessions/list-sessions.ts';
import { endSessionRoute } from './sessions/end-session.ts';
import { endOtherSessionsRoute } from './sessions/end-other-sessions.ts';
import type { PersonSessions } from './sessions/schemas.ts';
import { getNotificationPreferencesRoute } from './notifications/get-preferences.ts';
import { setNotificationPreferencesRoute } from './notifications/set-preferences.ts';
import { meterApiCalls } from './api-call-meter-hook.ts';
import { capMemberCallsRoute, capTokenCallsRoute } from './usage/cap-calls.ts';
import { getUsageRoute } from './usage/get-usage.ts';
import { measureAnswers, type ApiRequestMetrics } from './request-metrics-hook.ts';
import { vssRoutes } from './vss/vss-routes.ts';
import { fastifyTrustProxy, TRUST_NOBODY, type TrustedProxies } from '../http/client-address.ts';

// Generous for every body this API takes (the largest is a node's settings), small enough that
// nobody can make the service buffer megabytes.
export const API_BODY_LIMIT = 64 * 1024;

/**
 * A user interface the listener serves beside the API (web/web-ui.ts): its own routes, registered
 * outside the bearer scope, and the session the bearer scope accepts in place of a token.
 */
export interface MountedUi {
  sessions: SessionAuthenticator & PersonSessions & DeletionConfirmingSessions;
  register(app: FastifyInstance): void;
}

export async function buildApiServer(
  deps: ApiDeps & {
    log: Logger;
    publicUrl: string;
    web?: MountedUi;
    cors?: CorsPolicy | null;
    /** How long a checked API token is remembered; only where that is exact (bearer-auth.ts). */
    rememberTokensMs?: number;
    /**
     * `registered` (the default): the document and docs page plugins on this listener. `lazy`:
     * their routes answered by a second build of it with them, made at the first such request.
     */
    docs?: 'registered' | 'lazy';
    /** TRUSTED_PROXIES: whose X-Forwarded-For makes `request.ip` (sign-in throttling, audit); absent: nobody's. */
    trustedProxies?: TrustedProxies;
    /** Told of every answer (metrics/service-metrics.ts): its route's pattern, never its path. */
    requestMetrics?: ApiRequestMetrics;
  },
): Promise<FastifyInstance> {
  const serializers = lazySerializers();
  const validators = lazyValidators();
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    // Per-request lines would dominate the log at any real load; failures are logged where handled.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: API_BODY_LIMIT,
    genReqId: () => randomUUID(),
    trustProxy: fastifyTrustProxy(deps.trustedProxies ?? TRUST_NOBODY),
    requestIdHeader: false,
    // `/api//nodes` is `/api/nodes`: an older script of the original service writes it so, and the
    // node paths already collapse repeated slashes (gateway/route-path.ts).
    routerOptions: { ignoreDuplicateSlashes: true },
    clientErrorHandler: answerClientError,
    schemaController: { compilersFactory: { buildSerializer: serializers.factory, buildValidator: validators.factory } },
    ajv: {
      // Validate exactly what the client sent: no coercion ("5" is not a name of 5), no silent
      // removal of unknown fields (they are an error), every problem reported at once.
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true },
    },
  });
  installErrorHandlers(app);
  if (deps.requestMetrics) measureAnswers(app, deps.requestMetrics);
  lazyCompilersOf.set(app, { serializers, validators });
  // Validators and serializers are compiled on first use (validator-cache.ts, serializer-cache.ts);
  // the rest right after start, validators first (a bad request is answered before a good one).
  app.addHook('onListen', (done) => {
    validators
      .compileRest()
      .catch((err: unknown) => app.log.error({ err }, 'a request schema does not compile'))
      .then(() => serializers.compileRest())
      .catch((err: unknown) => app.log.error({ err }, 'a response schema does not compile'));
    done();
  });
  // Clients of the original service (and many HTTP libraries) send `Content-Type: application/json`
  // on every request, also on POSTs that carry nothing (start, stop, upgrade, logs): an empty
  // body is "no body", not malformed JSON. A route that needs a body still says it is missing.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined);
    else parseJson(request, body as string, done);
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // No answer of this listener is ever to be sniffed into another type or shown in a frame.
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('x-frame-options')) reply.header('x-frame-options', 'DENY');
    // Answered before the body was read to its end (413, an upload refused, a 401 before it):
    // the connection cannot carry another request; it is closed after the answer, gently.
    if (closeAfterUnreadBody(request.raw, reply.raw)) reply.header('connection', 'close');
  });
  if (deps.cors) allowCrossOrigin(app, deps.cors);

  for (const schema of [ErrorBody, Build, Node, WebhookEvent, WebhookDelivery, Backup, NodeEvent]) app.addSchema(schema);
  // The docs' own build answers through this listener, which counts the answer once.
  if (deps.docs === 'lazy') serveDocsFrom(app, () => buildApiServer({ ...deps, docs: 'registered', requestMetrics: undefined }));
  else await registerDocs(app, deps.publicUrl);

  // Public routes: no credentials.
  app.get('/healthz', { schema: { hide: true } }, async (_req, reply) =>
    deps.isReady() ? { status: 'ok' } : reply.status(503).send({ status: 'starting' }),
  );
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const { ready, checks } = await deps.readiness();
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
  });
  if (deps.docs !== 'lazy') app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // Web UI: pages, assets and the session routes (sign-in); its API calls go through the scope below.
  deps.web?.register(app);

  // Signed-URL routes: the signature in the query is the credential (a blob store whose download
  // URLs point at this service, the local one; S3's point at S3).
  const signed = [
    { store: deps.blobs, contentType: 'application/gzip' },
    { store: deps.backupBlobs, contentType: 'application/octet-stream' },
  ].flatMap(({ store, contentType }) =>
    store.openSigned ? [{ openSigned: store.openSigned.bind(store), urlPrefix: store.urlPrefix ?? '', contentType }] : [],
  );
  if (signed.length > 0) getDownloadRoute(app, signed);

  // The invitation's one-time secret is the credential: whoever accepts has no account yet.
  acceptInvitationRoute(app, deps);
  // Sign-up, verification and password reset: the body or the emailed link is all there is.
  if (deps.signup) signupRoutes(app, deps.signup);
  // VSS: the URL's credential and the request's signature are the credentials (api/vss/vss-routes.ts).
  if (deps.vss) await vssRoutes(app, deps.vss);

  // Bearer-token routes.
  await app.register(async (scope) => {
    requireBearerAuth(scope, {
      accounts: deps.accounts,
      sessions: deps.web?.sessions,
      ownsNode: (userId, nodeId) => deps.nodes.ownsNode(userId, nodeId),
      rememberTokensMs: deps.rememberTokensMs,
    });
    auditRoutes(scope, deps.audit);
    limitApiRate(scope, deps.rateLimits);
    meterApiCalls(scope, deps.meter);
    listNodesRoute(scope, deps);
    createNodeRoute(scope, deps);
    latestImageRoute(scope, deps);
    getNodeRoute(scope, deps);
    nodeHealthRoute(scope, deps);
    continuousStateRoute(scope, deps);
    destroyNodeRoute(scope, deps);
    getAccountRoute(scope, deps);
    listTokensRoute(scope, deps);
    createTokenRoute(scope, deps);
    revokeTokenRoute(scope, deps);
    verifyTokenRoute(scope, deps);
    nodeActionRoutes(scope, deps);
    startLogExportRoute(scope, deps);
    getLogExportRoute(scope, deps);
    createBackupRoute(scope, deps);
    exportNodeRoute(scope, deps);
    recoverNodeRoute(scope, deps);
    listBackupsRoute(scope, deps);
    getBackupRoute(scope, deps);
    deleteBackupRoute(scope, deps);
    uploadBackupRoute(scope, deps);
    listUploadsRoute(scope, deps);
    deleteUploadRoute(scope, deps);
    listAuditEventsRoute(scope, deps);
    updateSettingsRoute(scope, deps);
    webhookPublicKeyRoute(scope, deps);
    webhookPublicKeysRoute(scope, deps);
    listDeliveriesRoute(scope, deps);
    redeliverRoute(scope, deps);
    sendTestEventRoute(scope, deps);
    unlockNodeRoute(scope, deps);
    initNodeRoute(scope, deps);
    autoUnlockRoutes(scope, deps);
    certificateRoutes(scope, deps);
    nodeTokenRoutes(scope, deps);
    listNodeEventsRoute(scope, deps);
    streamEventsRoute(scope, deps);
    listMembersRoute(scope, deps);
    changeMemberRoleRoute(scope, deps);
    removeMemberRoute(scope, deps);
    leaveAccountRoute(scope, deps);
    deleteAccountRoute(scope, deps, deps.web?.sessions);
    offerTransferRoute(scope, deps);
    getTransferRoute(scope, deps);
    withdrawTransferRoute(scope, deps);
    acceptTransferRoute(scope, deps);
    inviteMemberRoute(scope, deps);
    listInvitationsRoute(scope, deps);
    revokeInvitationRoute(scope, deps);
    getUsageRoute(scope, deps);
    capMemberCallsRoute(scope, deps);
    capTokenCallsRoute(scope, deps);
    if (deps.web) {
      listSessionsRoute(scope, deps.web.sessions);
      endSessionRoute(scope, deps.web.sessions);
      endOtherSessionsRoute(scope, deps.web.sessions);
    }
    getNotificationPreferencesRoute(scope, deps.notifications);
    setNotificationPreferencesRoute(scope, deps.notifications);
  });
  return app;
}

/** The OpenAPI document (@fastify/swagger), made from the routes registered after it, and the docs page. */
async function registerDocs(app: FastifyInstance, publicUrl: string) {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui')]);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: API_INFO,
      servers: [{ url: publicUrl, description: 'This service (PUBLIC_URL)' }],
      tags: API_TAGS,
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
      webhooks: WEBHOOKS_OPENAPI,
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, docsPageOptions);
}

/**
 * The document and the docs page answered by `buildDocs()`'s listener, built at the first request
 * for either: the two plugins and the ~40 modules they load were ~60 ms of every start, for pages
 * most starts never serve. That listener is this one built again, so the document is the same.
 */
function serveDocsFrom(app: FastifyInstance, buildDocs: () => Promise<FastifyInstance>) {
  let docs: Promise<FastifyInstance> | undefined;
  const docsApp = () =>
    (docs ??= buildDocs()
      .then(async (built) => {
        await built.ready();
        return built;
      })
      .catch((err: unknown) => {
        docs = undefined;
        throw err;
      }));
  app.addHook('onClose', async () => {
    await (await docs?.catch(() => undefined))?.close();
  });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => (await docsApp()).swagger());
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    const answer = await (await docsApp()).inject({ method: request.method as 'GET' | 'HEAD', url: request.url, headers: request.headers });
    // Framing is this listener's own; the request id is this request's (set in onSend).
    const { 'content-length': _length, 'transfer-encoding': _encoding, connection: _connection, 'x-request-id': _id, ...headers } = answer.headers;
    return reply.code(answer.statusCode).headers(headers).send(answer.rawPayload);
  };
  app.get(DOCS_PAGE_PATH, { schema: { hide: true } }, forward);
  app.get(`${DOCS_PAGE_PATH}/*`, { schema: { hide: true } }, forward);
}

/**
 * CORS for the bearer-token API (http/cors.ts): preflights are answered before authentication
 * (they carry no token) and before routing (there are no OPTIONS routes). Not for the web UI's
 * session routes or pages: the session cookie must stay same-origin.
 */
function allowCrossOrigin(app: FastifyInstance, policy: CorsPolicy) {
  const covered = (url: string) => url.startsWith('/api/') && !url.startsWith('/api/session');
  app.addHook('onRequest', async (request, reply) => {
    if (!covered(request.url) || !isPreflight(request.method, request.headers)) return;
    return reply.code(204).headers(preflightHeaders(policy, request.headers)).send();
  });
  app.addHook('onSend', async (request, reply) => {
    if (covered(request.url)) reply.headers(responseCorsHeaders(policy, request.headers.origin));
  });
}

const lazyCompilersOf = new WeakMap<FastifyInstance, { serializers: LazySerializers; validators: LazyValidators }>();

/** Compiles every response serializer of the API not compiled yet (a test proves they all compile). */
export function compileAllSerializers(app: FastifyInstance): Promise<void> {
  return lazyCompilersOf.get(app)?.serializers.compileRest() ?? Promise.resolve();
}

/** The API's request validators, every one compiled (a test proves they compile and refuse bad input). */
export async function compileAllValidators(app: FastifyInstance): Promise<LazyValidators> {
  const validators = lazyCompilersOf.get(app)!.validators;
  await validators.compileRest();
  return validators;
}
