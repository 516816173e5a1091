// The management API's OpenAPI document without a running service: the same listener the service
// builds (api/server.ts, with the web UI's session routes), on services that are never called.
// Registering a route only declares it; handlers run on requests, and none is made here. This is
// what scripts/openapi.ts writes to client/openapi.json and the typed client is generated from.
import type { SignupService } from '../signup/service.ts';
import type { FastifyInstance } from 'fastify';
import { buildApiServer } from '../api/server.ts';
import type { ApiDeps } from '../api/deps.ts';
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { webUi } from '../web/web-ui.ts';
import type { Database } from '../db/database.ts';
import type { BlobStore } from '../blobs/blob-store.ts';

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

/** A dependency that must not be used: anything asked of it while rendering is a mistake, said plainly. */
function unused<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get(_target, property) {
      // Awaiting or inspecting a value asks for `then` or symbols; that is not a use.
      if (property === 'then' || typeof property === 'symbol') return undefined;
      throw new Error(`the offline API listener has no services: ${name}.${property} was used (it only renders the OpenAPI document and the docs page)`);
    },
  });
}

// No signed URLs: the download route they would add is hidden from the document anyway.
const withoutSignedUrls = { openSigned: undefined } as unknown as BlobStore;

/**
 * The management listener as the service builds it, on services that throw when used: enough to
 * render its OpenAPI document and serve its docs page, with no database. The configuration is the
 * default one, never the environment's, so the document (its `servers` entry included) is the same
 * on every machine.
 */
export async function buildOfflineApiServer(): Promise<FastifyInstance> {
  const config = loadConfig({});
  const services: ApiDeps = {
    accounts: unused('accounts'),
    members: unused('members'),
    transfers: unused('transfers'),
    accountDeletion: unused('accountDeletion'),
    signup: unused<SignupService>('signup'),
    notifications: unused('notifications'),
    plans: unused('plans'),
    nodes: unused('nodes'),
    webhooks: unused('webhooks'),
    logExports: unused('logExports'),
    certificates: unused('certificates'),
    nodeTokens: unused('nodeTokens'),
    unlocker: unused('unlocker'),
    backups: unused('backups'),
    backupLimits: config.backups,
    autoUnlock: unused('autoUnlock'),
    audit: unused('audit'),
    usage: unused('usage'),
    nodeEvents: unused('nodeEvents'),
    eventHub: unused('eventHub'),
    memberWatch: unused('memberWatch'),
    eventStreamBuffer: { maxEvents: 1, maxBytes: 1 },
    rateLimits: { perTokenPerMinute: config.apiRateLimitPerMinute, perUserPerMinute: config.apiUserRateLimitPerMinute },
    health: unused('health'),
    continuousState: unused('continuousState'),
    blobs: withoutSignedUrls,
    backupBlobs: withoutSignedUrls,
    isReady: () => false,
    readiness: async () => ({ ready: false, checks: {} }),
  };
  return buildApiServer({
    ...services,
    log: createLogger('silent'),
    publicUrl: config.publicUrl,
    web: webUi(unused<Database>('database'), config),
    cors: null,
  });
}

/** The document the service serves at /api/openapi.json. */
export async function renderOpenApiDocument(): Promise<OpenApiDocument> {
  const app = await buildOfflineApiServer();
  try {
    await app.ready();
    return structuredClone(app.swagger()) as unknown as OpenApiDocument;
  } finally {
    await app.close();
  }
}
