// The web UI as the management listener mounts it: sessions, the session routes and the pages.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { findUserNode } from '../db/nodes.ts';
import { WebSessions } from './sessions.ts';
import { sessionRoutes } from './session-routes.ts';
import { uiRoutes, type WebUiOptions } from './ui-routes.ts';

export interface WebUi extends WebUiOptions {
  sessions: WebSessions;
}

const NODE_ID = /^[0-9a-f]{32}$/;

export function webUi(db: Database, config: Pick<Config, 'publicUrl' | 'connectPageUrl' | 'nodeApiUrl' | 'userNodeUrl'>): WebUi {
  return {
    sessions: new WebSessions({ db, secure: config.publicUrl.startsWith('https:') }),
    isUsersNode: async (userId, nodeId) => NODE_ID.test(nodeId) && (await findUserNode(db, userId, nodeId)) !== undefined,
    publicUrl: config.publicUrl,
    connectPageUrl: config.connectPageUrl,
    nodeApiUrl: config.nodeApiUrl,
    userNodeUrl: config.userNodeUrl,
  };
}

/** Session routes and pages; the API routes accept the session through requireBearerAuth. */
export function registerWebUi(app: FastifyInstance, web: WebUi) {
  const allowedOrigins = [...new Set([web.publicUrl, web.connectPageUrl].map((u) => new URL(u).origin))];
  sessionRoutes(app, { sessions: web.sessions, allowedOrigins });
  uiRoutes(app, web);
}
