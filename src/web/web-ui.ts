// The web UI as the management listener mounts it: sessions, the session routes and the pages.
// The listener (api/server.ts) is handed the result and knows nothing else of the UI.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../db/database.ts';
import { findUserNode } from '../db/nodes.ts';
import { WebSessions } from './sessions.ts';
import { ownOriginCheck, sessionRoutes } from './session-routes.ts';
import { uiRoutes, type WebUiOptions } from './ui-routes.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import { TwoFactor } from '../accounts/two-factor.ts';
import { twoFactorRoutes } from './two-factor-routes.ts';
import { Passkeys } from '../accounts/passkeys.ts';
import { passkeyRoutes } from './passkey-routes.ts';
import type { OidcProvider } from '../oidc/settings.ts';
import type { SignupConfig } from '../signup/settings.ts';
import { OidcSignIn } from '../oidc/service.ts';
import { oidcRoutes } from './oidc-routes.ts';

export interface WebUi {
  /** How the API's bearer scope accepts the UI's session cookie instead of a token. */
  sessions: WebSessions;
  /** Registers the session routes and pages (outside the bearer scope). */
  register(app: FastifyInstance): void;
}

const NODE_ID = /^[0-9a-f]{32}$/;

export function webUi(
  db: Database,
  config: { publicUrl: string; connectPageUrl: string; nodeApiUrl: string; userNodeUrl: string; signup?: Pick<SignupConfig, 'mode' | 'plan'>; oidcProviders?: OidcProvider[] },
  audit?: Pick<AuditLog, 'record'>,
): WebUi {
  const passkeys = new Passkeys({ db, publicUrl: config.publicUrl });
  const twoFactor = new TwoFactor({ db, audit, passkeys });
  const sessions = new WebSessions({ db, secure: config.publicUrl.startsWith('https:'), audit, twoFactor });
  const oidc = new OidcSignIn({
    db,
    providers: config.oidcProviders ?? [],
    publicUrl: config.publicUrl,
    signup: config.signup ?? { mode: 'invite-only', plan: 'starter' },
    audit,
  });
  const options: WebUiOptions = {
    sessions,
    isUsersNode: async (userId, nodeId) => NODE_ID.test(nodeId) && (await findUserNode(db, userId, nodeId)) !== undefined,
    publicUrl: config.publicUrl,
    connectPageUrl: config.connectPageUrl,
    nodeApiUrl: config.nodeApiUrl,
    userNodeUrl: config.userNodeUrl,
    signupOpen: config.signup?.mode === 'open' || config.signup?.mode === 'approval',
    oidcProviders: oidc.providers,
    passkeys: passkeys.available,
  };
  const allowedOrigins = [...new Set([config.publicUrl, config.connectPageUrl].map((u) => new URL(u).origin))];
  return {
    sessions,
    register(app) {
      sessionRoutes(app, { sessions, allowedOrigins });
      twoFactorRoutes(app, { sessions, twoFactor });
      passkeyRoutes(app, { sessions, twoFactor, requireOwnOrigin: ownOriginCheck(allowedOrigins) });
      oidcRoutes(app, { oidc, sessions });
      uiRoutes(app, options);
    },
  };
}
