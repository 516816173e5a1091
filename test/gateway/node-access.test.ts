// Both node access gateways end to end, through real sockets, real certificates issued by the
// API and real devnode daemons: a fresh node answers its own locked 403 through both gateways;
// init, unlock, nodeinfo, address; an upgrade brings it back locked and it is unlocked again
// through the management API. Then the attacks: tokens, the cross-tenant matrix on every route
// of both gateways, traversal, certificates from elsewhere, expired, bound to another node,
// revoked (also on a kept-alive connection), a stopped node and a node that hangs.
import { gatewayError } from '../helpers/gateway-error.ts';
import { execFile } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CertificateAuthority } from '../../src/pki/certificate-authority.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { repoRoot } from '../helpers/service-process.ts';
import { rawRequest, tlsRequest, type ClientCredentials } from './gateway-client.ts';

const run = promisify(execFile);

/** The operator CLI, run asynchronously: with PGlite it calls back into this very process. */
async function cli(env: NodeJS.ProcessEnv, args: string[]) {
  const r = await run('npx', ['--no-install', 'rln-cloud', ...args, '--json'], { cwd: repoRoot, env, timeout: 60_000 }).catch((e) => e);
  try {
    return JSON.parse(String(r.stdout).trim());
  } catch {
    throw new Error(`the CLI printed no JSON: ${r.stdout} ${r.stderr}`);
  }
}
const PASSWORD = 'node-password-123';
const LOCKED = { error: 'Node is locked (hint: call unlock)', code: 403 };

describe(`node access gateways on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let revoked: TestUser;
  let aliceNode: string;
  let aliceOther: string;
  let bobNode: string;
  let aliceCert: ClientCredentials;
  let ca: string;

  const bearer = (user: TestUser | undefined, path: string, opts: { method?: string; body?: string; headers?: Record<string, string> } = {}) =>
    rawRequest(t.config.nodeApiUrl, path, {
      method: opts.method,
      body: opts.body,
      headers: { ...(user ? { authorization: `Bearer ${user.token}` } : {}), ...(opts.body ? { 'content-type': 'application/json' } : {}), ...opts.headers },
    });
  const mtls = (creds: Partial<ClientCredentials>, path: string, opts: { method?: string; body?: string; agent?: https.Agent } = {}) =>
    tlsRequest(t.config.userNodeUrl, path, { ...creds, ca }, { method: opts.method, body: opts.body, agent: opts.agent, headers: opts.body ? { 'content-type': 'application/json' } : {} });
  const node = async (id: string, user: TestUser) => (await t.call(`/api/nodes/${id}`, { token: user.token })).json.data;
  const issue = async (user: TestUser, nodeId: string, body?: object) => {
    const r = await t.call(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: user.token, body });
    expect(r.status, r.text).toBe(200);
    return r.json as ClientCredentials & { publicKey: string };
  };

  beforeAll(async () => {
    t = await startTestServer({ NODE_API_TIMEOUT_MS: '1500' });
    ({ alice, bob, revoked } = await createTenants(t));
    [aliceNode, aliceOther] = await createNodes(t, alice, [{ name: 'a1' }, { name: 'a2' }]);
    [bobNode] = await createNodes(t, bob, [{ name: 'b1' }]);
    aliceCert = await issue(alice, aliceNode);
    ca = aliceCert.certificateChain;
  });
  afterAll(() => t?.stop());

  describe('a node from creation to unlocked, through both gateways', () => {
    it("answers a fresh node's own locked 403, unchanged, through both gateways; its port reached directly answers 401", async () => {
      const { port } = t.server.runtime.endpoint({ nodeId: aliceNode, restPort: (await t.server.db.query<{ rest_port: number }>('SELECT rest_port FROM nodes WHERE id = $1', [aliceNode]))[0]!.rest_port } as any);
      // The node runs with RLN's authentication (issue #40): without a Biscuit of its root key, or
      // with the caller's own API token, its port refuses everything.
      const unauthorized = '{"error":"Missing or invalid credentials","code":401,"name":"Unauthorized"}';
      for (const headers of [{}, { authorization: `Bearer ${alice.token}` }, { authorization: alice.token }] as Array<Record<string, string>>) {
        const direct = await rawRequest(`http://127.0.0.1:${port}`, '/nodeinfo', { headers });
        expect(direct.status).toBe(401);
        expect(direct.text).toBe(unauthorized);
      }
      const rootKey = (await t.server.db.query<{ public_key: string }>('SELECT public_key FROM node_root_keys WHERE node_id = $1', [aliceNode]))[0]?.public_key;
      expect(rootKey).toMatch(/^[0-9a-f]{64}$/);
      const viaBearer = await bearer(alice, `/${alice.id}/${aliceNode}/nodeinfo`);
      const viaMtls = await mtls(aliceCert, `/nodes/${alice.id}/${aliceNode}/nodeinfo`);
      for (const r of [viaBearer, viaMtls]) {
        expect(r.status).toBe(403);
        expect(r.text).toBe(JSON.stringify({ ...LOCKED, name: 'LockedNode' }));
        expect(r.headers['content-type']).toBe('application/json');
      }
    });

    it('answers a status document for the node itself', async () => {
      for (const path of [`/${alice.id}/${aliceNode}`, `/${alice.id}/${aliceNode}/`]) {
        const r = await bearer(alice, path);
        expect(r.status).toBe(200);
        expect(r.json).toEqual({ nodeId: aliceNode, name: 'a1', network: 'regtest', status: 'RUNNING', locked: true, initialized: false, rln_commit_id: expect.any(String) });
      }
      expect((await mtls(aliceCert, `/nodes/${alice.id}/${aliceNode}`)).json.nodeId).toBe(aliceNode);
      expect((await bearer(alice, `/${alice.id}/${aliceNode}`, { method: 'DELETE' })).status).toBe(405);
    });

    it('init through the gateway marks the node initialized', async () => {
      const r = await bearer(alice, `/${alice.id}/${aliceNode}/init`, { method: 'POST', body: JSON.stringify({ password: PASSWORD }) });
      expect(r.status).toBe(200);
      expect(r.json.mnemonic.split(' ')).toHaveLength(12);
      expect((await node(aliceNode, alice)).initialized).toBe(true);
    });

    it("a wrong password gets the node's own 401 and the node stays locked", async () => {
      const r = await bearer(alice, `/${alice.id}/${aliceNode}/unlock`, { method: 'POST', body: JSON.stringify({ password: 'wrong-password' }) });
      expect(r.status).toBe(401);
      expect(r.json).toMatchObject({ code: 401 });
      expect((await node(aliceNode, alice)).locked).toBe(true);
    });

    it('unlock through the bearer gateway; then nodeinfo and address through both', async () => {
      const r = await bearer(alice, `/${alice.id}/${aliceNode}/unlock`, { method: 'POST', body: JSON.stringify({ password: PASSWORD }) });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({});
      expect((await node(aliceNode, alice)).locked).toBe(false);
      expect((await bearer(alice, `/${alice.id}/${aliceNode}/nodeinfo`)).json.pubkey).toMatch(/^[0-9a-f]{66}$/);
      expect((await mtls(aliceCert, `/nodes/${alice.id}/${aliceNode}/nodeinfo`)).status).toBe(200);
      const address = await mtls(aliceCert, `/nodes/${alice.id}/${aliceNode}/address`, { method: 'POST', body: '{}' });
      expect(address.status).toBe(200);
      expect(address.json.address).toEqual(expect.any(String));
    });

    it('works with curl and the issued files', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'rln-curl-'));
      writeFileSync(join(dir, 'node.pem'), aliceCert.certificate);
      writeFileSync(join(dir, 'node.key'), aliceCert.privateKey, { mode: 0o600 });
      writeFileSync(join(dir, 'ca.pem'), ca);
      // The node's address comes with the certificate: no user id to dig out of invoke_url.
      const issued = aliceCert as ClientCredentials & { nodeUrl: string; serial: string };
      expect(issued.nodeUrl).toBe(`${t.config.userNodeUrl}/nodes/${alice.id}/${aliceNode}/`);
      expect(issued.serial).toMatch(/^[0-9a-f]+$/);
      const url = `${issued.nodeUrl}nodeinfo`;
      const ok = await run('curl', ['-sS', '--cert', join(dir, 'node.pem'), '--key', join(dir, 'node.key'), '--cacert', join(dir, 'ca.pem'), url]);
      expect(JSON.parse(ok.stdout).pubkey).toMatch(/^[0-9a-f]{66}$/);
      await expect(run('curl', ['-sS', '--cacert', join(dir, 'ca.pem'), url])).rejects.toThrow();
    });

    it('an upgrade brings the node back locked; the management API unlocks it again', async () => {
      await t.server.services.releases.publish('devnode-0.2.0');
      const up = await t.call(`/api/nodes/${aliceNode}/upgrade`, { method: 'POST', token: alice.token });
      expect(up.status, up.text).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
      const upgraded = await t.waitForStatus(alice, aliceNode, 'RUNNING', 60_000);
      expect(upgraded).toMatchObject({ locked: true, rln_commit_id: 'devnode-0.2.0' });
      expect((await bearer(alice, `/${alice.id}/${aliceNode}/nodeinfo`)).json).toMatchObject(LOCKED);

      const wrong = await t.call(`/api/nodes/${aliceNode}/unlock`, { method: 'POST', token: alice.token, body: { password: 'not-the-password' } });
      expect(wrong.status).toBe(403);
      expect(wrong.json.error.code).toBe('wrong_password');
      const garbled = await t.call(`/api/nodes/${aliceNode}/unlock`, { method: 'POST', token: alice.token, body: `{"password": "${PASSWORD}` });
      expect(garbled.status).toBe(400);
      expect(garbled.text).not.toContain(PASSWORD);
      const extra = await t.call(`/api/nodes/${aliceNode}/unlock`, { method: 'POST', token: alice.token, body: { password: PASSWORD, indexer: 'x' } });
      expect(extra.status).toBe(400);
      expect(extra.text).not.toContain(PASSWORD);

      // Clients of the original service send five fields: network is checked, node_endpoint ignored.
      const original = (network: string) => ({
        password: PASSWORD,
        announce_addresses: [],
        announce_alias: 'shop',
        network,
        node_endpoint: `${t.config.nodeApiUrl}/${alice.id}/${aliceNode}`,
      });
      // The announce fields refuse NUL and control characters, as the chain fields do, by both ways in (issue #37).
      for (const hostile of [{ announce_alias: 'shop\u0000' }, { announce_alias: 'shop\nfake log line' }, { announce_addresses: ['1.2.3.4:9735\r\n'] }, { announce_addresses: ['a b:9735'] }]) {
        const viaApi = await t.call(`/api/nodes/${aliceNode}/unlock`, { method: 'POST', token: alice.token, body: { ...original('regtest'), ...hostile } });
        expect(viaApi.status, viaApi.text).toBe(400);
        expect(viaApi.json.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/announce_(alias|addresses).*(control characters|visible characters)/) });
        const viaGateway = await bearer(alice, `/${alice.id}/${aliceNode}/unlock`, { method: 'POST', body: JSON.stringify({ ...original('regtest'), ...hostile }) });
        expect(viaGateway.status, viaGateway.text).toBe(400);
        expect(viaGateway.json.rln_cloud.code).toBe('invalid_request');
      }
      expect((await node(aliceNode, alice)).locked).toBe(true);
      const otherNetwork = await t.call(`/api/nodes/${aliceNode}/unlock`, { method: 'POST', token: alice.token, body: original('testnet') });
      expect(otherNetwork.status).toBe(400);
      expect(otherNetwork.json.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/network is testnet, but node \w+ runs on regtest/) });
      expect((await node(aliceNode, alice)).locked).toBe(true);

      const r = await t.call(`/api/nodes/${aliceNode}/unlock`, { method: 'POST', token: alice.token, body: original('regtest') });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ message: expect.any(String) });
      expect((await node(aliceNode, alice)).locked).toBe(false);
      expect((await bearer(alice, `/${alice.id}/${aliceNode}/nodeinfo`)).status).toBe(200);
      const again = await t.call(`/api/nodes/${aliceNode}/unlock`, { method: 'POST', token: alice.token, body: { password: PASSWORD } });
      expect(again.status).toBe(409);
      expect(again.json.error.code).toBe('node_state_conflict');
      const foreign = await t.call(`/api/nodes/${aliceNode}/unlock`, { method: 'POST', token: bob.token, body: { password: PASSWORD } });
      expect(foreign.status).toBe(404);
    });

    it('a /lock the node accepts through the gateway marks the node locked', async () => {
      const r = await bearer(alice, `/${alice.id}/${aliceNode}/lock`, { method: 'POST', body: '{}' });
      expect(r.status, r.text).toBe(200);
      expect((await node(aliceNode, alice)).locked).toBe(true);
      const unlocked = await t.call(`/api/nodes/${aliceNode}/unlock`, { method: 'POST', token: alice.token, body: { password: PASSWORD } });
      expect(unlocked.status, unlocked.text).toBe(200);
      expect((await node(aliceNode, alice)).locked).toBe(false);
    });
  });

  describe('bearer gateway: tokens', () => {
    const path = () => `/${alice.id}/${aliceNode}/nodeinfo`;
    it('no token, a malformed, an unknown or a revoked token -> 401', async () => {
      for (const headers of [{} as Record<string, string>, { authorization: 'Bearer nope' }, { authorization: `Bearer rlnc_${'A'.repeat(43)}` }, { authorization: 'Basic YTpi' }]) {
        const r = await bearer(undefined, path(), { headers });
        expect(r.status).toBe(401);
        expect(gatewayError(r).code).toBe('unauthorized');
        expect(r.headers['www-authenticate']).toBe('Bearer');
      }
      expect((await bearer(revoked, path())).status).toBe(401);
    });

    it('a token revoked right after a request is refused on the next one (the gateway forgets it at once)', async () => {
      const second = await t.server.services.accounts.createToken(alice.email, 'short-lived');
      const asSecond = { ...alice, token: second.token, tokenId: second.id };
      expect((await bearer(asSecond, path())).status).toBe(200);
      await t.server.services.accounts.revokeToken(second.id);
      expect((await bearer(asSecond, path())).status).toBe(401);
    });
  });

  describe('cross-tenant matrix: no route of either gateway reaches another user’s node', () => {
    const routes: Array<[string, string, string?]> = [
      ['GET', ''],
      ['GET', 'nodeinfo'],
      ['POST', 'unlock', JSON.stringify({ password: PASSWORD })],
      ['POST', 'init', JSON.stringify({ password: PASSWORD })],
      ['POST', 'address', '{}'],
      ['POST', 'lock', '{}'],
      ['POST', 'shutdown', '{}'],
    ];

    it('bearer: another user id, or another user’s node under one’s own id -> the same 404 as a missing node', async () => {
      const missing = 'f'.repeat(32);
      for (const [method, route, body] of routes) {
        for (const target of [`/${bob.id}/${bobNode}`, `/${alice.id}/${bobNode}`, `/${bob.id}/${aliceNode}`, `/${alice.id}/${missing}`]) {
          const r = await bearer(alice, `${target}/${route}`, { method, body });
          expect(r.status, `${method} ${target}/${route}`).toBe(404);
          expect(gatewayError(r).code).toBe('node_not_found');
        }
      }
      expect(await node(bobNode, bob)).toMatchObject({ status: 'RUNNING', locked: true, initialized: false });
    });

    it('mTLS: a certificate for one node reaches no other node, of the same user or another', async () => {
      for (const [method, route, body] of routes) {
        for (const target of [`/nodes/${bob.id}/${bobNode}`, `/nodes/${alice.id}/${aliceOther}`, `/nodes/${alice.id}/${bobNode}`, `/nodes/${bob.id}/${aliceNode}`]) {
          const r = await mtls(aliceCert, `${target}/${route}`, { method, body });
          expect(r.status, `${method} ${target}/${route}`).toBe(403);
          expect(gatewayError(r).code).toBe('certificate_not_for_node');
        }
      }
      expect(await node(bobNode, bob)).toMatchObject({ status: 'RUNNING', locked: true, initialized: false });
      expect(await node(aliceOther, alice)).toMatchObject({ status: 'RUNNING', locked: true, initialized: false });
    });

    it('traversal in the route, raw or encoded, never leaves the node’s API', async () => {
      for (const route of [`../../${bob.id}/${bobNode}/nodeinfo`, `%2e%2e/%2e%2e/${bob.id}/${bobNode}/nodeinfo`, `..%2f..%2f${bob.id}%2f${bobNode}%2fnodeinfo`, `.%2E/x`, `a/..`, `a%5c..%5cb`]) {
        const r = await bearer(alice, `/${alice.id}/${aliceNode}/${route}`);
        expect(r.status, route).toBe(400);
        expect(gatewayError(r).code).toBe('invalid_path');
        const m = await mtls(aliceCert, `/nodes/${alice.id}/${aliceNode}/${route}`);
        expect(m.status, route).toBe(400);
      }
      expect((await bearer(alice, `http://127.0.0.1:1/${alice.id}/${aliceNode}/nodeinfo`)).status).toBe(400);
    });
  });

  describe('mTLS gateway: certificates', () => {
    const path = () => `/nodes/${alice.id}/${aliceNode}/nodeinfo`;

    it('refuses a connection without a certificate, or with one from another CA', async () => {
      await expect(mtls({}, path())).rejects.toThrow();
      const other = await CertificateAuthority.create('Another CA');
      const foreign = await other.ca.issueClientCertificate({ userId: alice.id, nodeId: aliceNode, validitySeconds: 3600 });
      await expect(mtls({ certificate: foreign.certificatePem, privateKey: foreign.privateKeyPem }, path())).rejects.toThrow();
    });

    it('refuses an expired certificate', async () => {
      // X.509 times have whole seconds: 3 s leaves at least 2 for the first request.
      const shortLived = await issue(alice, aliceNode, { validitySeconds: 3 });
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
      const first = await mtls(shortLived, path(), { agent });
      expect(first.status, first.text).toBe(200);
      await new Promise((r) => setTimeout(r, 3100));
      const onOpenConnection = await mtls(shortLived, path(), { agent });
      expect(onOpenConnection.status).toBe(403);
      expect(gatewayError(onOpenConnection).code).toBe('certificate_expired');
      agent.destroy();
      // A new connection fails in the handshake (the alert may arrive as a reset under TLS 1.3).
      await expect(mtls(shortLived, path())).rejects.toThrow();
    });

    it('a revoked certificate is refused on its next request, also on a kept-alive connection', async () => {
      const creds = await issue(alice, aliceNode);
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
      const first = await mtls(creds, path(), { agent });
      expect(first.status).toBe(200);
      const serial = (await t.call(`/api/nodes/${aliceNode}/certs`, { token: alice.token })).json.certificates.at(-1).serial;
      const del = await t.call(`/api/nodes/${aliceNode}/certs/${serial}`, { method: 'DELETE', token: alice.token });
      expect(del.status).toBe(200);
      expect(del.json.data).toMatchObject({ serial, status: 'revoked', revokedAt: expect.any(String) });
      const next = await mtls(creds, path(), { agent });
      expect(next.reusedSocket).toBe(true);
      expect(next.status).toBe(403);
      expect(gatewayError(next).code).toBe('certificate_revoked');
      expect(next.headers.connection).toBe('close');
      agent.destroy();
      expect((await mtls(creds, path())).status).toBe(403);
    });

    it('lists certificates, and refuses bad input and other users', async () => {
      const list = await t.call(`/api/nodes/${aliceNode}/certs`, { token: alice.token });
      expect(list.status).toBe(200);
      expect(list.json.certificates.length).toBeGreaterThanOrEqual(3);
      expect(list.json.certificates[0]).toEqual({
        serial: expect.stringMatching(/^[0-9a-f]{32}$/),
        nodeId: aliceNode,
        fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
        status: expect.stringMatching(/^(valid|expired|revoked)$/),
        createdAt: expect.any(String),
        notBefore: expect.any(String),
        expiresAt: expect.any(String),
        revokedAt: null,
      });
      expect(JSON.stringify(list.json)).not.toContain('PRIVATE KEY');
      const serial = list.json.certificates[0].serial;
      const cases: Array<[string, string, unknown, number, string]> = [
        ['GET', `/api/nodes/${aliceNode}/certs`, undefined, 404, 'node_not_found'],
        ['POST', `/api/nodes/${aliceNode}/generate-cert`, undefined, 404, 'node_not_found'],
        ['DELETE', `/api/nodes/${aliceNode}/certs/${serial}`, undefined, 404, 'node_not_found'],
      ];
      for (const [method, path, body, status, code] of cases) {
        const r = await t.call(path, { method, token: bob.token, body });
        expect(r.status, `${method} ${path}`).toBe(status);
        expect(r.json.error.code).toBe(code);
      }
      const bad: Array<[string, string, unknown, number, string]> = [
        ['DELETE', `/api/nodes/${aliceNode}/certs/${'ab'.repeat(16)}`, undefined, 404, 'certificate_not_found'],
        ['DELETE', `/api/nodes/${aliceNode}/certs/not-hex`, undefined, 400, 'invalid_request'],
        ['POST', `/api/nodes/${aliceNode}/generate-cert`, { validitySeconds: 0 }, 400, 'invalid_request'],
        ['POST', `/api/nodes/${aliceNode}/generate-cert`, { validitySeconds: 10 ** 9 }, 400, 'invalid_request'],
        ['POST', `/api/nodes/${aliceNode}/generate-cert`, { color: 'red' }, 400, 'invalid_request'],
        ['POST', `/api/nodes/xyz/generate-cert`, undefined, 400, 'invalid_request'],
      ];
      for (const [method, path, body, status, code] of bad) {
        const r = await t.call(path, { method, token: alice.token, body });
        expect(r.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
        expect(r.json.error.code).toBe(code);
      }
      expect((await t.call(`/api/nodes/${aliceNode}/certs`, {})).status).toBe(401);
      expect((await t.call(`/api/nodes/${aliceNode}/generate-cert`, { method: 'POST', token: revoked.token })).status).toBe(401);
    });

    it('the operator lists and revokes certificates with the CLI', async () => {
      const creds = await issue(alice, aliceOther);
      expect((await mtls(creds, `/nodes/${alice.id}/${aliceOther}/nodeinfo`)).status).toBe(403); // the node's own: locked
      const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: t.config.dataDir, DATABASE_URL: t.config.databaseUrl };
      if (!t.config.databaseUrl) delete env.DATABASE_URL;
      const listed = await cli(env, ['cert', 'list', aliceOther]);
      expect(listed.certificates).toHaveLength(1);
      const revokedNow = await cli(env, ['cert', 'revoke', listed.certificates[0].serial.toUpperCase()]);
      expect(revokedNow).toMatchObject({ serial: listed.certificates[0].serial, status: 'revoked' });
      const r = await mtls(creds, `/nodes/${alice.id}/${aliceOther}/nodeinfo`);
      expect(gatewayError(r).code).toBe('certificate_revoked');
      expect((await cli(env, ['cert', 'revoke', 'ab'.repeat(16)])).error.code).toBe('certificate_not_found');
    });
  });

  describe('nodes that cannot answer', () => {
    it('a node that hangs -> 504; a node that is not RUNNING -> 409 with its status', async () => {
      const pid = (await t.server.runtime.status(bobNode)).pid!;
      process.kill(pid, 'SIGSTOP');
      try {
        const r = await bearer(bob, `/${bob.id}/${bobNode}/nodeinfo`);
        expect(r.status).toBe(504);
        expect(gatewayError(r).code).toBe('node_timeout');
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      expect((await t.call(`/api/nodes/${bobNode}/stop`, { method: 'POST', token: bob.token })).status).toBe(200);
      await t.waitForStatus(bob, bobNode, 'PAUSED');
      const r = await bearer(bob, `/${bob.id}/${bobNode}/nodeinfo`);
      expect(r.status).toBe(409);
      expect(gatewayError(r)).toMatchObject({ code: 'node_not_running', name: 'NodeNotRunning', details: { status: 'PAUSED' } });
      const m = await t.call(`/api/nodes/${bobNode}/unlock`, { method: 'POST', token: bob.token, body: { password: PASSWORD } });
      expect(m.status).toBe(409);
      expect((await bearer(bob, `/${bob.id}/${bobNode}`)).json.status).toBe('PAUSED');
    });
  });
});
