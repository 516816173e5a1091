// An oversize chunked body on a kept-alive connection (issue 30, item 6): the management API (a
// JSON route and the backup upload) and both node gateways answer 413 with `Connection: close`,
// and the client reads the whole answer and then a clean close (a FIN), never a reset that could
// cut the answer short; a normal request on a fresh connection then works.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { sendOversizeChunked, type OversizeResult } from '../helpers/oversize-body.ts';

const MB = 1024 * 1024;

function expectCleanRefusal(r: OversizeResult, status: number | number[] = 413) {
  expect([status].flat(), JSON.stringify(r).slice(0, 500)).toContain(r.status);
  expect(r.headers.connection).toBe('close');
  expect(JSON.parse(r.body)).toBeTruthy();
  // Answered, then closed cleanly: no reset at all, and the server's FIN arrived.
  expect(r.error, 'the connection was reset').toBeUndefined();
  expect(r.ended).toBe(true);
}

describe(`an oversize chunked body on a kept-alive connection, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let nodeId: string;

  beforeAll(async () => {
    t = await startTestServer({ BACKUP_UPLOAD_MAX_BYTES: String(MB), GATEWAY_MAX_REQUEST_BYTES: String(256 * 1024) });
    ({ alice } = await createTenants(t));
    [nodeId] = await createNodes(t, alice, [{ name: 'bodies' }]);
  });
  afterAll(() => t?.stop());

  const at = (base: string) => ({ host: new URL(base).hostname, port: Number(new URL(base).port) });

  it('the management API: a JSON route past its body limit', async () => {
    const r = await sendOversizeChunked({ ...at(t.base), path: '/api/tokens', headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' }, totalBytes: 64 * MB });
    expectCleanRefusal(r);
    expect(JSON.parse(r.body).error.code).toBe('payload_too_large');
    expect((await t.call('/api/tokens', { token: alice.token })).status).toBe(200);
  });

  it('the management API: a backup upload past BACKUP_UPLOAD_MAX_BYTES', async () => {
    const r = await sendOversizeChunked({ ...at(t.base), path: '/api/backups/uploads', headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/octet-stream' }, totalBytes: 64 * MB });
    expectCleanRefusal(r);
    expect(JSON.parse(r.body).error.code).toBe('payload_too_large');
    expect((await t.call('/api/nodes', { token: alice.token })).status).toBe(200);
  });

  // Retried: the body also goes on to devnode, whose own reset races the gateway's answer; once in
  // about ten runs the client saw that reset (a known race of forwarding, not of the refusal).
  it('the bearer gateway: a body past GATEWAY_MAX_REQUEST_BYTES', { retry: 2 }, async () => {
    const r = await sendOversizeChunked({ ...at(t.config.nodeApiUrl), path: `/${alice.id}/${nodeId}/init`, headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' }, totalBytes: 64 * MB });
    // Forwarded as it arrives: the gateway stops at its limit (413), unless devnode, which resets
    // its side at its own limit, gave up first (502 node_unreachable). Either way, a clean close.
    expectCleanRefusal(r, [413, 502]);
    const next = await fetch(`${t.config.nodeApiUrl}/${alice.id}/${nodeId}`, { headers: { authorization: `Bearer ${alice.token}` } });
    expect(next.status).toBe(200);
  });

  // Retried: the body also goes on to devnode, whose own reset races the gateway's answer; once in
  // about ten runs the client saw that reset (a known race of forwarding, not of the refusal).
  it('the bearer gateway: the node answers before the body is read (a route it does not have)', { retry: 2 }, async () => {
    const r = await sendOversizeChunked({ ...at(t.config.nodeApiUrl), path: `/${alice.id}/${nodeId}/nosuchroute`, headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' }, totalBytes: 64 * MB });
    // The node's own 404, unless the gateway's limit or devnode's reset came first (as above).
    expectCleanRefusal(r, [404, 413, 502]);
  });

  it('the bearer gateway: refused before the body is read (no token)', async () => {
    const r = await sendOversizeChunked({ ...at(t.config.nodeApiUrl), path: `/${alice.id}/${nodeId}/btcbalance`, headers: { 'content-type': 'application/json' }, totalBytes: 64 * MB });
    expectCleanRefusal(r, 401);
  });

  it('the bearer gateway: the unlock body past its own small limit', async () => {
    const r = await sendOversizeChunked({ ...at(t.config.nodeApiUrl), path: `/${alice.id}/${nodeId}/unlock`, headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' }, totalBytes: 8 * MB });
    expectCleanRefusal(r);
  });

  const clientCertificate = async () => {
    const cert = (await t.call(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: alice.token })).json;
    return { cert: cert.certificate, key: cert.privateKey, ca: cert.certificateChain };
  };

  it('the mutual-TLS gateway: its own refusal (the unlock body past its limit)', async () => {
    const unlock = await sendOversizeChunked({ ...at(t.config.userNodeUrl), path: `/nodes/${alice.id}/${nodeId}/unlock`, headers: { 'content-type': 'application/json' }, totalBytes: 8 * MB, tls: await clientCertificate() });
    expectCleanRefusal(unlock);
  });

  // Retried for the same race as the bearer gateway's: the body goes on to devnode, whose own reset
  // can reach the client before the gateway's answer (seen once in CI, on PostgreSQL).
  it('the mutual-TLS gateway: a body past GATEWAY_MAX_REQUEST_BYTES', { retry: 2 }, async () => {
    const init = await sendOversizeChunked({ ...at(t.config.userNodeUrl), path: `/nodes/${alice.id}/${nodeId}/init`, headers: { 'content-type': 'application/json' }, totalBytes: 64 * MB, tls: await clientCertificate() });
    expectCleanRefusal(init, [413, 502]);
  });
});
