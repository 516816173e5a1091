// Token scopes on the management API beyond the per-route checks of bearer-auth.test.ts: creating
// a scoped token (and the bad ones), the scopes in the token list, what a token limited to nodes
// lists and may change, that a scoped token cannot mint or revoke tokens, that a web session is
// unscoped, and the operator CLI's `token create --read-only --node <id>`.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { repoRoot } from '../helpers/service-process.ts';

const run = promisify(execFile);
const PASSWORD = 'correct horse battery';
const MISSING = 'f'.repeat(32);

describe(`token scopes on the management API on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nodeA: string;
  let nodeB: string;
  let nodeC: string;
  let bobsNode: string;

  beforeAll(async () => {
    t = await startTestServer();
    ({ alice, bob } = await createTenants(t));
    [nodeA, nodeB, nodeC] = await createNodes(t, alice, [{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    [bobsNode] = await createNodes(t, bob, [{ name: 'bobs' }]);
  });
  afterAll(() => t?.stop());

  const createToken = (body: unknown, token = alice.token) => t.call('/api/tokens', { method: 'POST', token, body });
  const scopedToken = async (body: Record<string, unknown>) => {
    const r = await createToken({ name: 'scoped', ...body });
    expect(r.status, r.text).toBe(200);
    return r.json.data as { id: string; token: string };
  };

  describe('POST /api/tokens with a scope', () => {
    it('creates a scoped token and shows its scope, here and in the token list', async () => {
      const r = await createToken({ name: 'dashboard', expiresInDays: 7, readOnly: true, nodeIds: [nodeB, nodeA, nodeB], access: 'gateway' });
      expect(r.status, r.text).toBe(200);
      expect(r.json.data).toMatchObject({ name: 'dashboard', readOnly: true, access: 'gateway', expiresAt: expect.any(String) });
      // Duplicates are dropped; the order given is kept.
      expect(r.json.data.nodeIds).toEqual([nodeB, nodeA]);
      const listed = (await t.call('/api/tokens', { token: alice.token })).json.tokens;
      expect(listed.find((x: any) => x.id === r.json.data.id)).toEqual({
        id: r.json.data.id,
        name: 'dashboard',
        createdAt: expect.any(String),
        lastUsedAt: null,
        expiresAt: r.json.data.expiresAt,
        revokedAt: null,
        readOnly: true,
        nodeIds: [nodeB, nodeA],
        access: 'gateway',
      });
      // A token created without a scope, like every token from before scopes, is unscoped.
      expect(listed.find((x: any) => x.id === alice.tokenId)).toMatchObject({ readOnly: false, nodeIds: null, access: 'all' });
    });

    it("refuses another user's node exactly like a missing one: 400 naming nodeIds", async () => {
      const foreign = await createToken({ name: 'x', nodeIds: [nodeA, bobsNode] });
      const missing = await createToken({ name: 'x', nodeIds: [nodeA, MISSING] });
      for (const [r, id] of [[foreign, bobsNode], [missing, MISSING]] as const) {
        expect(r.status, r.text).toBe(400);
        expect(r.json.error).toMatchObject({ code: 'invalid_request', message: `nodeIds: node ${id} was not found`, details: { field: 'nodeIds', nodeId: id } });
      }
      const comparable = (error: any, id: string) => ({ ...error, requestId: '', message: error.message.replace(id, 'X'), details: { ...error.details, nodeId: 'X' } });
      expect(comparable(foreign.json.error, bobsNode)).toEqual(comparable(missing.json.error, MISSING));
    });

    it('refuses unknown scopes and malformed ones, naming the field, and creates nothing', async () => {
      const before = (await t.call('/api/tokens', { token: alice.token })).json.tokens.length;
      const cases: Array<[unknown, RegExp]> = [
        [{ name: 'x', scopes: ['admin'] }, /unknown field "scopes"/],
        [{ name: 'x', writeOnly: true }, /unknown field "writeOnly"/],
        [{ name: 'x', access: 'admin' }, /access must be all, api or gateway/],
        [{ name: 'x', readOnly: 'yes' }, /readOnly must be a boolean/],
        [{ name: 'x', nodeIds: [] }, /nodeIds must have at least 1 item/],
        [{ name: 'x', nodeIds: nodeA }, /nodeIds must be an array/],
        [{ name: 'x', nodeIds: ['not-a-node'] }, /nodeIds\.0 must be 32 lowercase hexadecimal characters/],
        [{ name: 'x', nodeIds: Array.from({ length: 101 }, () => nodeA) }, /nodeIds must have at most 100 items/],
      ];
      for (const [body, message] of cases) {
        const r = await createToken(body);
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.json.error.code).toBe('invalid_request');
        expect(r.json.error.message).toMatch(message);
      }
      expect((await t.call('/api/tokens', { token: alice.token })).json.tokens.length).toBe(before);
    });
  });

  describe('a token limited to some nodes', () => {
    let limited: string;
    beforeAll(async () => {
      limited = (await scopedToken({ nodeIds: [nodeA, nodeC] })).token;
    });

    it('lists only its nodes, all at once and page by page', async () => {
      const all = await t.call('/api/nodes', { token: limited });
      expect(all.json.nodes.map((n: any) => n.nodeId)).toEqual([nodeA, nodeC]);
      const first = await t.call('/api/nodes?limit=1', { token: limited });
      expect(first.json.nodes.map((n: any) => n.nodeId)).toEqual([nodeA]);
      const second = await t.call(`/api/nodes?limit=1&cursor=${first.json.nextCursor}`, { token: limited });
      expect(second.json).toMatchObject({ nodes: [expect.objectContaining({ nodeId: nodeC })], nextCursor: null });
      // The unscoped token still sees every node.
      expect((await t.call('/api/nodes', { token: alice.token })).json.nodes).toHaveLength(3);
    });

    it('changes its nodes, not the others', async () => {
      const settings = { settings: { webhookUrl: '' } };
      expect((await t.call(`/api/nodes/${nodeA}/settings`, { method: 'POST', token: limited, body: settings })).status).toBe(200);
      // A certificate is a credential: it would outlive the token (test below).
      expect((await t.call(`/api/nodes/${nodeC}/generate-cert`, { method: 'POST', token: limited })).json.error.code).toBe('forbidden_scope');
      const other = await t.call(`/api/nodes/${nodeB}/settings`, { method: 'POST', token: limited, body: settings });
      expect(other.status).toBe(403);
      expect(other.json.error).toMatchObject({ code: 'forbidden_scope', message: `this API token is limited to other nodes than ${nodeB}` });
      const destroy = await t.call('/api/nodes', { method: 'DELETE', token: limited, body: { destroyNodeId: nodeB } });
      expect(destroy.json.error.code).toBe('forbidden_scope');
      expect((await t.call(`/api/nodes/${nodeB}`, { token: alice.token })).json.data.status).toBe('RUNNING');
    });

    it("answers 404 for another user's node and a missing one alike, never 403", async () => {
      for (const id of [bobsNode, MISSING]) {
        const r = await t.call(`/api/nodes/${id}`, { token: limited });
        expect(r.status).toBe(404);
        expect(r.json.error.code).toBe('node_not_found');
      }
    });

    it('cannot create a node (it would reach beyond its nodes)', async () => {
      const r = await t.call('/api/nodes', { method: 'POST', token: limited, body: { name: 'more', network: 'regtest' } });
      expect(r.status).toBe(403);
      expect(r.json.error.code).toBe('forbidden_scope');
      expect((await t.call('/api/nodes', { token: alice.token })).json.nodes).toHaveLength(3);
    });
  });

  it('a scoped token cannot create or revoke tokens, but can list them', async () => {
    const victim = await scopedToken({});
    for (const scope of [{ readOnly: true }, { nodeIds: [nodeA] }, { access: 'api' }]) {
      const token = (await scopedToken(scope)).token;
      const minted = await createToken({ name: 'wider' }, token);
      expect(minted.status, JSON.stringify(scope)).toBe(403);
      expect(minted.json.error.code).toBe('forbidden_scope');
      const revoke = await t.call(`/api/tokens/${victim.id}`, { method: 'DELETE', token });
      expect(revoke.json.error.code).toBe('forbidden_scope');
      expect((await t.call('/api/tokens', { token })).status).toBe(200);
    }
    expect((await t.call('/api/nodes', { token: victim.token })).status).toBe(200);
  });

  it('no scoped token issues or revokes a client certificate (one opens the mutual-TLS gateway and outlives the token)', async () => {
    const issued = await t.call(`/api/nodes/${nodeA}/generate-cert`, { method: 'POST', token: alice.token });
    expect(issued.status, issued.text).toBe(200);
    const certsBefore = (await t.call(`/api/nodes/${nodeA}/certs`, { token: alice.token })).json.certificates;
    for (const scope of [{ access: 'api' }, { nodeIds: [nodeA] }, { nodeIds: [nodeA], access: 'all' }, { readOnly: true }]) {
      const token = (await scopedToken(scope)).token;
      const cert = await t.call(`/api/nodes/${nodeA}/generate-cert`, { method: 'POST', token });
      expect(cert.status, JSON.stringify(scope)).toBe(403);
      expect(cert.json.error).toMatchObject({ code: 'forbidden_scope', message: expect.stringMatching(/client certificates|read-only/) });
      expect(cert.json.privateKey).toBeUndefined();
      const revoke = await t.call(`/api/nodes/${nodeA}/certs/${issued.json.serial}`, { method: 'DELETE', token });
      expect(revoke.json.error.code, JSON.stringify(scope)).toBe('forbidden_scope');
      // Listing certificates is a read, allowed to each of them.
      expect((await t.call(`/api/nodes/${nodeA}/certs`, { token })).status).toBe(200);
    }
    expect((await t.call(`/api/nodes/${nodeA}/certs`, { token: alice.token })).json.certificates).toEqual(certsBefore);
  });

  it('an api-only token uses the API like an unscoped one; a revoked scoped token is 401', async () => {
    const { id, token } = await scopedToken({ access: 'api' });
    expect((await t.call('/api/nodes', { token })).json.nodes).toHaveLength(3);
    expect((await t.call(`/api/nodes/${nodeA}/settings`, { method: 'POST', token, body: { settings: { webhookUrl: '' } } })).status).toBe(200);
    expect((await t.call(`/api/tokens/${id}`, { method: 'DELETE', token: alice.token })).status).toBe(200);
    expect((await t.call('/api/nodes', { token })).status).toBe(401);
  });

  it('a web session is unscoped: it creates scoped tokens and nodes', async () => {
    await t.server.services.accounts.setPassword(alice.email, PASSWORD);
    const signIn = await t.call('/api/session', { method: 'POST', body: { email: alice.email, password: PASSWORD } });
    const headers = { cookie: signIn.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': signIn.json.csrfToken };
    const created = await t.call('/api/tokens', { method: 'POST', headers, body: { name: 'from-the-ui', readOnly: true, nodeIds: [nodeA] } });
    expect(created.json.data).toMatchObject({ readOnly: true, nodeIds: [nodeA], access: 'all' });
    const node = await t.call('/api/nodes', { method: 'POST', headers, body: { name: 'ui', network: 'regtest' } });
    expect(node.status, node.text).toBe(200);
  });

  it('the OpenAPI document shows the scope fields and that every bearer route may answer 403', async () => {
    const doc = (await t.call('/api/openapi.json')).json;
    const create = doc.paths['/api/tokens'].post;
    expect(Object.keys(create.requestBody.content['application/json'].schema.properties)).toEqual(['name', 'expiresInDays', 'readOnly', 'nodeIds', 'access']);
    expect(create.description).toMatch(/forbidden_scope/);
    const listed = doc.paths['/api/tokens'].get.responses['200'].content['application/json'].schema.properties.tokens.items.properties;
    expect(listed).toMatchObject({ readOnly: { type: 'boolean' }, nodeIds: expect.any(Object), access: expect.any(Object) });
    const bearerPaths = Object.keys(doc.paths).filter((path) => path.startsWith('/api/nodes') || path.startsWith('/api/tokens') || path.startsWith('/api/backups'));
    expect(bearerPaths.length).toBeGreaterThan(15);
    for (const path of bearerPaths) {
      for (const [method, op] of Object.entries<any>(doc.paths[path])) expect(op.responses['403'], `${method} ${path}`).toBeDefined();
    }
  });

  it('the operator CLI creates scoped tokens: token create --read-only --node <id>', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: t.config.dataDir, DATABASE_URL: t.config.databaseUrl };
    if (!t.config.databaseUrl) delete env.DATABASE_URL;
    // Asynchronous: with PGlite the CLI calls back into this very process (the admin channel).
    const cli = async (args: string[]) => JSON.parse(String((await run('npx', ['--no-install', 'rln-cloud', ...args, '--json'], { cwd: repoRoot, env, timeout: 60_000 }).catch((e) => e)).stdout).trim());

    const made = await cli(['token', 'create', alice.email, '--name', 'ops', '--read-only', '--node', nodeA, '--node', nodeB]);
    expect(made).toMatchObject({ name: 'ops', readOnly: true, nodeIds: [nodeA, nodeB], access: 'all', token: expect.stringMatching(/^rlnc_/) });
    const refused = await t.call(`/api/nodes/${nodeA}/stop`, { method: 'POST', token: made.token });
    expect(refused.json.error.code).toBe('forbidden_scope');
    expect((await t.call('/api/nodes', { token: made.token })).json.nodes.map((n: any) => n.nodeId)).toEqual([nodeA, nodeB]);

    const gatewayOnly = await cli(['token', 'create', alice.email, '--node', `${nodeC},${nodeA}`, '--access', 'gateway']);
    expect(gatewayOnly).toMatchObject({ readOnly: false, nodeIds: [nodeC, nodeA], access: 'gateway' });
    const listed = await cli(['token', 'list', alice.email]);
    expect(listed.tokens.find((x: any) => x.id === made.id)).toMatchObject({ readOnly: true, nodeIds: [nodeA, nodeB], access: 'all' });

    const foreign = await cli(['token', 'create', alice.email, '--node', bobsNode]);
    expect(foreign.error).toEqual({ code: 'invalid_request', message: `nodeIds: node ${bobsNode} was not found` });
    expect((await cli(['token', 'create', alice.email, '--access', 'everything'])).error.message).toBe('access must be one of all, api, gateway');
    expect((await cli(['token', 'create', alice.email, '--node', 'nope'])).error.message).toMatch(/"nope" is not a node id/);
  });
});
