// Hostile text in every field the management API stores or records (issue 30, item 4): a NUL byte,
// a lone surrogate, an over-long string, in token names and ids, node names, webhook URLs, the
// path parameters of audited routes, unlock passwords and web sign-in emails. None may answer 500
// (PostgreSQL refuses NUL and jsonb refuses "\u0000" and lone surrogates), and every audited
// attempt must be in the trail, whatever it held. Run on PostgreSQL too: PGlite is more lenient
// about some of these.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { itStoresHostileInput, type StoringRouteUnderTest } from '../helpers/security.ts';
import { parseExposition } from '../helpers/metrics.ts';

// A lone surrogate cannot be percent-encoded as UTF-8: a client sends the bytes of one (ED A0 80),
// which the server decodes to U+FFFD. Fastify refuses a path parameter past 100 characters
// (maxParamLength): that request matches no route, answers 404 not_found and is no attempt on anything.
/** One request written byte for byte (UTF-8), its status and body. */
async function rawRequest(base: string, request: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  const socket = net.connect({ host: hostname, port: Number(port) });
  socket.end(Buffer.from(request, 'utf8'));
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const [head, ...rest] = text.split('\r\n\r\n');
  let body = rest.join('\r\n\r\n');
  // A chunked answer: the JSON between its size lines.
  if (/transfer-encoding: chunked/i.test(head!)) body = body.split('\r\n').filter((_, i) => i % 2 === 1).join('');
  return { status: Number(head!.split(' ')[1]), body };
}

const path = (text: string) => encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, '\uE000')).replaceAll('%EE%80%80', '%ED%A0%80');

/** Every route that stores or records text a client sent. */
const STORING_ROUTES: StoringRouteUnderTest[] = [
  { name: 'POST /api/tokens (name)', request: (text) => ({ path: '/api/tokens', method: 'POST', body: { name: text } }), audit: 'token.created' },
  { name: 'DELETE /api/tokens/:id', request: (text) => ({ path: `/api/tokens/${path(text)}`, method: 'DELETE' }), audit: 'token.revoked', inPath: true },
  { name: 'POST /api/nodes (name)', request: (text) => ({ path: '/api/nodes', method: 'POST', body: { name: text, network: 'regtest' } }) },
  {
    name: 'POST /api/nodes/:id/settings (webhookUrl)',
    request: (text, id) => ({ path: `/api/nodes/${id}/settings`, method: 'POST', body: { settings: { webhookUrl: `http://127.0.0.1:9/${text}` } } }),
  },
  {
    name: 'POST /api/nodes/:id/unlock (password)',
    request: (text, id) => ({ path: `/api/nodes/${id}/unlock`, method: 'POST', body: { password: text } }),
    audit: 'node.unlock',
  },
  { name: 'DELETE /api/nodes/:id/certs/:serial', request: (text, id) => ({ path: `/api/nodes/${id}/certs/${path(text)}`, method: 'DELETE' }), audit: 'certificate.revoked', inPath: true },
  { name: 'DELETE /api/nodes/:id/backups/:backupId', request: (text, id) => ({ path: `/api/nodes/${id}/backups/${path(text)}`, method: 'DELETE' }), audit: 'backup.deleted', inPath: true },
  { name: 'DELETE /api/nodes (destroyNodeId)', request: (text) => ({ path: '/api/nodes', method: 'DELETE', body: { destroyNodeId: text } }), audit: 'node.destroyed' },
  {
    name: 'POST /api/session (email)',
    request: (text) => ({ path: '/api/session', method: 'POST', body: { email: `${text.slice(0, 300)}@example.com`, password: 'whatever' } }),
    // Not audited: an email that is no user's belongs to no one's trail. Stored as a sign-in failure's key.
  },
];

describe(`hostile text in what the API stores, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let nodeId: string;

  beforeAll(async () => {
    t = await startTestServer();
    ({ alice } = await createTenants(t));
    [nodeId] = await createNodes(t, alice, [{ name: 'hostile' }]);
  });
  afterAll(() => t?.stop());

  // Everyone's trail, as the operator reads it: a sign-in with an unknown email is in no user's.
  const latestAuditEvents = async () => (await t.server.services.audit.list({ limit: 20 })).events;
  for (const route of STORING_ROUTES) itStoresHostileInput(() => ({ t, token: alice.token, nodeId, latestAuditEvents }), route);

  it('a NUL byte is stored as U+FFFD where a field allows it, and the trail says what was sent', async () => {
    const r = await t.call('/api/tokens', { method: 'POST', token: alice.token, body: { name: 'bad\u0000name' } });
    expect(r.status).toBe(400);
    // The trail is written once the answer is sent: give it a moment.
    await expect
      .poll(async () => (await t.server.services.audit.list({ userId: alice.id, limit: 1 })).events[0], { timeout: 3000 })
      .toMatchObject({ action: 'token.created', target: 'bad\uFFFDname', outcome: 'failed' });
  });

  it('an unencoded Unicode query string gets our error body, not the framework\'s', async () => {
    // Sent as raw bytes: fetch and http.request percent-encode (or refuse) them first.
    const answer = await rawRequest(t.base, `GET /api/nodes?name=\u00e9t\u00e9 HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${alice.token}\r\nconnection: close\r\n\r\n`);
    expect(answer.status, answer.body).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('percent-encode'), requestId: expect.any(String) } });
  });

  it('no audit event failed to be recorded', async () => {
    const text = await (await fetch(`http://127.0.0.1:${t.config.metricsPort}/metrics`)).text();
    expect(parseExposition(text).samples.get('rlncloud_audit_record_failures_total')).toBe(0);
  });
});
