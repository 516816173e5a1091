// The web UI's pages and assets. Every page is the same small HTML shell (with the public URLs the
// scripts need, embedded as JSON) and plain ES modules from ./public that call the JSON API; no
// build step, no CDN: everything the browser loads comes from this listener.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { projectPath } from '../platform/paths.ts';
import { NODE_EVENT_TYPES } from '../domain/node-events.ts';
import { INVITATION_PAGE_PATH } from '../accounts/members.ts';
import { RESET_PAGE_PATH, SIGN_UP_PAGE_PATH, VERIFY_PAGE_PATH } from '../signup/service.ts';

const PUBLIC_DIR = projectPath('src', 'web', 'public') + '/';
export const ASSET_PREFIX = '/ui/';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.html': 'text/html; charset=utf-8',
};

// Scripts and styles only from this origin; nothing may frame the pages (clickjacking of the
// Destroy and Revoke buttons); forms and links cannot leak to other sites.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface WebUiOptions {
  publicUrl: string;
  /** Base of the node pages: {CONNECT_PAGE_URL}/<node_id> and {CONNECT_PAGE_URL}/<node_id>/connect. */
  connectPageUrl: string;
  nodeApiUrl: string;
  userNodeUrl: string;
  /** Whether the sign-in page offers sign-up (SIGNUP_MODE=open or approval). */
  signupOpen?: boolean;
  /** Whether the pages offer passkeys: PUBLIC_URL names a host (browsers refuse passkeys on an IP address). */
  passkeys?: boolean;
  /** The sign-in page's OpenID provider buttons (OIDC_*). */
  oidcProviders?: { id: string; label: string }[];
  /** Signed-in users asking for a page of a node that is not theirs get a 404 (the page says so too). */
  sessions?: { userOf(request: FastifyRequest): Promise<{ id: string } | undefined> };
  isUsersNode?: (userId: string, nodeId: string) => Promise<boolean>;
}

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (TYPES[extname(name)] && name !== 'index.html') {
        const body = readFileSync(path);
        const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
        assets.set(relative(PUBLIC_DIR, path).split('\\').join('/'), { body, type: TYPES[extname(name)]!, etag });
      }
    }
  };
  walk(PUBLIC_DIR);
  return assets;
}

/** The path part of the node pages' base URL, without a trailing slash ('' for the root). */
export function nodesPath(connectPageUrl: string): string {
  return new URL(connectPageUrl).pathname.replace(/\/+$/, '');
}

export function uiRoutes(app: FastifyInstance, opts: WebUiOptions) {
  const assets = loadAssets();
  const base = nodesPath(opts.connectPageUrl);
  const config = {
    nodesPath: base,
    connectPageUrl: opts.connectPageUrl,
    nodeApiUrl: opts.nodeApiUrl,
    userNodeUrl: opts.userNodeUrl,
    publicUrl: opts.publicUrl,
    signupOpen: opts.signupOpen ?? false,
    oidcProviders: opts.oidcProviders ?? [],
    passkeys: opts.passkeys ?? false,
    // The event stream names each message after its type, and an EventSource hears only the names
    // it listens for: the page takes the list from here rather than keep a copy that could drift.
    eventTypes: NODE_EVENT_TYPES,
  };
  // `<` is escaped so that no value can close the script element it sits in.
  const shell = readFileSync(join(PUBLIC_DIR, 'index.html'), 'utf8').replace(
    '<!--CONFIG-->',
    JSON.stringify(config).replaceAll('<', '\\u003c'),
  );

  const secure = (reply: FastifyReply) =>
    reply
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .header('x-frame-options', 'DENY');

  const page = async (_request: FastifyRequest, reply: FastifyReply) =>
    secure(reply).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(shell);

  const hide = { schema: { hide: true } };
  app.get('/', hide, async (_request, reply) => reply.redirect(base || '/sign-in'));
  app.get('/sign-in', hide, page);
  app.get('/tokens', hide, page);
  app.get('/account', hide, page);
  app.get('/two-factor', hide, page);
  // Where invitation links point (accounts/members.ts); the page reads the secret from the fragment.
  app.get(INVITATION_PAGE_PATH, hide, page);
  // Sign-up and the targets of the emailed links (signup/service.ts); the pages read a link's secret from the fragment.
  app.get(SIGN_UP_PAGE_PATH, hide, page);
  app.get(VERIFY_PAGE_PATH, hide, page);
  app.get(RESET_PAGE_PATH, hide, page);
  if (base) app.get(base, hide, page);
  const nodePage = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const user = await opts.sessions?.userOf(request);
    if (user && opts.isUsersNode && !(await opts.isUsersNode(user.id, request.params.id))) reply.status(404);
    return page(request, reply);
  };
  app.get(`${base}/:id`, hide, nodePage);
  app.get(`${base}/:id/connect`, hide, nodePage);

  app.get<{ Params: { '*': string } }>(`${ASSET_PREFIX}*`, hide, async (request, reply) => {
    const asset = assets.get(request.params['*']);
    if (!asset) return reply.status(404).type('text/plain; charset=utf-8').send('not found');
    secure(reply).header('etag', asset.etag).header('cache-control', 'no-cache');
    if (request.headers['if-none-match'] === asset.etag) return reply.status(304).send();
    return reply.type(asset.type).send(asset.body);
  });
}
