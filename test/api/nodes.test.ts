// The node endpoints of the skeleton through real HTTP: list, create, read, destroy and the latest
// image version. Each gets a happy path, bad input and another user's attempt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createTenants } from '../helpers/tenants.ts';

describe(`node API on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nodeId: string;

  beforeAll(async () => {
    t = await startTestServer();
    ({ alice, bob } = await createTenants(t, { alice: 'scale' }));
  });
  afterAll(() => t?.stop());

  const nodeCount = async (user: TestUser) => (await t.call('/api/nodes', { token: user.token })).json.nodes.length;

  it('creates a node that goes from STARTING to RUNNING with a SUCCESS build', async () => {
    const r = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'bar-a', network: 'regtest', settings: { webhookUrl: 'https://example.com/hook' } } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      data: { nodeId: expect.stringMatching(/^[0-9a-f]{32}$/), name: 'bar-a', network: 'regtest', status: 'STARTING', node: expect.any(Object) },
      message: expect.any(String),
    });
    nodeId = r.json.data.nodeId;
    // data.node is the Node as GET shows it (where the original service's clients read it). The
    // create build may move on between the two answers: what it changes is compared apart.
    const created = r.json.data.node;
    const read = (await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data;
    const stable = ({ id, buildNumber, timestamp, action, imageVersion }: any) => ({ id, buildNumber, timestamp, action, imageVersion });
    const settled = (n: any) => ({ ...n, status: '', locked: null, peerDNS: '', peerPort: 0, updatedAt: '', builds: n.builds.map(stable) });
    expect(settled(created)).toEqual(settled(read));
    expect(Object.keys(created)).toEqual(Object.keys(read));
    expect(created).toMatchObject({ nodeId, status: 'STARTING', locked: true, initialized: false });
    expect(created.builds).toEqual([expect.objectContaining({ id: `${nodeId}-1`, buildNumber: 1, buildStatus: 'IN_PROGRESS', currentPhase: 'QUEUED' })]);
    const node = await t.waitForStatus(alice, nodeId, 'RUNNING');
    expect(node).toMatchObject({
      nodeId,
      name: 'bar-a',
      network: 'regtest',
      locked: true,
      initialized: false,
      invoke_url: `${t.config.nodeApiUrl}/nodes/${alice.id}/${nodeId}/`,
      settings: { webhookUrl: 'https://example.com/hook' },
      rln_commit_id: t.config.initialImageVersion,
      peerPort: expect.any(Number),
      // Where invoke_url points: the bearer gateway's port and scheme (NODE_API_URL, http here).
      port: t.config.nodeApiPort,
      protocol: 'http',
    });
    expect(node.port).toBe(Number(new URL(node.invoke_url).port));
    expect(node.builds).toEqual([
      expect.objectContaining({
        id: `${nodeId}-1`,
        buildNumber: 1,
        buildStatus: 'SUCCESS',
        buildComplete: true,
        currentPhase: 'DONE',
        action: 'create',
        imageVersion: t.config.initialImageVersion,
      }),
    ]);
    expect(Date.parse(node.builds[0].timestamp)).not.toBeNaN();
  });

  it('lists the caller’s nodes with builds, and only theirs', async () => {
    const mine = await t.call('/api/nodes', { token: alice.token });
    expect(mine.status).toBe(200);
    expect(mine.json.nodes.map((n: any) => n.nodeId)).toEqual([nodeId]);
    expect(mine.json.nodes[0].builds).toHaveLength(1);
    const theirs = await t.call('/api/nodes', { token: bob.token });
    expect(theirs.json).toEqual({ nodes: [] });
  });

  it('answers the latest image version', async () => {
    const r = await t.call('/api/nodes/latest-rln-image', { token: alice.token });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ data: t.config.initialImageVersion });
  });

  it("answers 404 for another user's node, exactly as for a missing one", async () => {
    const foreign = await t.call(`/api/nodes/${nodeId}`, { token: bob.token });
    const missing = await t.call(`/api/nodes/${'f'.repeat(32)}`, { token: bob.token });
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(foreign.json.error.code).toBe('node_not_found');
    expect({ ...foreign.json.error, requestId: '', message: foreign.json.error.message.replace(nodeId, 'X') }).toEqual({
      ...missing.json.error,
      requestId: '',
      message: missing.json.error.message.replace('f'.repeat(32), 'X'),
    });
  });

  it('rejects a malformed node id with 400 naming the problem', async () => {
    for (const id of ['xyz', '..%2F..%2Fetc', 'F'.repeat(32)]) {
      const r = await t.call(`/api/nodes/${id}`, { token: alice.token });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('invalid_request');
      expect(r.json.error.message).toContain('32 lowercase hexadecimal');
    }
  });

  describe('bad input to POST /api/nodes is a 400 that names the problem and creates nothing', () => {
    const cases: Array<[string, unknown, RegExp, string?]> = [
      ['invalid JSON', '{"name": "x",', /not valid JSON/, 'invalid_json'],
      ['missing name', { network: 'regtest' }, /name is required/],
      ['empty name', { name: '', network: 'regtest' }, /name must not be empty/],
      ['name over 64 characters', { name: 'x'.repeat(65), network: 'regtest' }, /name must be at most 64/],
      ['name of 10k characters', { name: 'x'.repeat(10_000), network: 'regtest' }, /name must be at most 64/],
      ['control characters in name', { name: 'a\u0000b', network: 'regtest' }, /control characters/],
      ['name with a newline', { name: 'a\nb', network: 'regtest' }, /control characters/],
      ['name with a C1 control (8-bit CSI)', { name: 'a\u009b31mb', network: 'regtest' }, /control characters/],
      ['name with a bidirectional override', { name: 'invoice\u202Etxt.exe', network: 'regtest' }, /control characters/],
      ['name with leading space', { name: ' a', network: 'regtest' }, /whitespace/],
      ['name is a number', { name: 5, network: 'regtest' }, /name must be a string/],
      ['mainnet', { name: 'x', network: 'mainnet' }, /^network must be regtest or testnet$/],
      ['network is a number', { name: 'x', network: 5 }, /^network must be regtest or testnet$/],
      ['missing network', { name: 'x' }, /network is required/],
      ['unknown field', { name: 'x', network: 'regtest', colour: 'red' }, /unknown field "colour"/],
      ['settings not an object', { name: 'x', network: 'regtest', settings: 'a' }, /settings must be an object/],
      ['unknown settings field', { name: 'x', network: 'regtest', settings: { foo: 1 } }, /unknown field "foo"/],
      ['body is an array', [], /body must be an object/],
    ];
    for (const [label, body, message, code] of cases) {
      it(label, async () => {
        const before = await nodeCount(alice);
        const r = await t.call('/api/nodes', { method: 'POST', token: alice.token, body });
        expect(r.status, r.text).toBe(400);
        expect(r.json.error.code).toBe(code ?? 'invalid_request');
        expect(r.json.error.message).toMatch(message);
        expect(r.json.error.requestId).toEqual(expect.any(String));
        expect(await nodeCount(alice)).toBe(before);
      });
    }

    it('a body over the size limit -> 413', async () => {
      const r = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'x', network: 'regtest', pad: 'x'.repeat(100_000) } });
      expect(r.status).toBe(413);
      expect(r.json.error.code).toBe('payload_too_large');
    });

    it('a wrong Content-Type -> 415', async () => {
      const r = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(r.status).toBe(415);
      expect(r.json.error.code).toBe('unsupported_media_type');
    });
  });

  describe('DELETE /api/nodes', () => {
    it('rejects a missing or malformed destroyNodeId', async () => {
      const missing = await t.call('/api/nodes', { method: 'DELETE', token: alice.token, body: {} });
      expect(missing.status).toBe(400);
      expect(missing.json.error.message).toMatch(/destroyNodeId is required/);
      const malformed = await t.call('/api/nodes', { method: 'DELETE', token: alice.token, body: { destroyNodeId: 'abc' } });
      expect(malformed.status).toBe(400);
    });

    it("answers 404 to another user and leaves the node running", async () => {
      const r = await t.call('/api/nodes', { method: 'DELETE', token: bob.token, body: { destroyNodeId: nodeId } });
      expect(r.status).toBe(404);
      expect((await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data.status).toBe('RUNNING');
    });

    it('destroys the node: DESTROYING, then DESTROYED with its storage removed', async () => {
      const r = await t.call('/api/nodes', { method: 'DELETE', token: alice.token, body: { destroyNodeId: nodeId } });
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ message: expect.any(String) });
      const node = await t.waitForStatus(alice, nodeId, 'DESTROYED');
      expect(node.builds.map((b: any) => [b.action, b.buildStatus])).toEqual([['create', 'SUCCESS'], ['destroy', 'SUCCESS']]);
      expect(await t.server.runtime.status(nodeId)).toEqual({ state: 'missing' });
    });

    it('answers 409 when destroying a node that is already destroyed', async () => {
      const r = await t.call('/api/nodes', { method: 'DELETE', token: alice.token, body: { destroyNodeId: nodeId } });
      expect(r.status).toBe(409);
      expect(r.json.error.code).toBe('node_destroyed');
    });
  });

  it('serves an OpenAPI 3.1 document without credentials', async () => {
    const r = await t.call('/api/openapi.json');
    expect(r.status).toBe(200);
    expect(r.json.openapi).toMatch(/^3\.1/);
    expect(Object.keys(r.json.paths)).toEqual(expect.arrayContaining(['/api/nodes', '/api/nodes/{id}', '/api/nodes/latest-rln-image']));
    expect(r.json.components.schemas.Node.properties.status.anyOf.length).toBe(9);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    const docs = await t.call('/api/docs/');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    expect(docs.headers.get('x-frame-options')).toBe('DENY');
    expect(docs.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('takes an empty body with Content-Type: application/json as no body, as the original service did', async () => {
    const jsonButEmpty = (path: string) => t.call(path, { method: 'POST', token: alice.token, body: '', headers: { 'content-type': 'application/json' } });
    // Routes that carry nothing: answered as without a body (here the node exists and is RUNNING).
    for (const path of [`/api/nodes/${nodeId}/logs`, `/api/nodes/${nodeId}/generate-cert`, `/api/nodes/${nodeId}/webhooks/test`]) {
      const r = await jsonButEmpty(path);
      expect([r.status, r.json?.error?.code], path).not.toEqual([400, 'invalid_json']);
      expect(r.status, `${path}: ${r.text}`).toBeLessThan(500);
    }
    for (const verb of ['stop', 'start', 'upgrade']) {
      const r = await jsonButEmpty(`/api/nodes/${nodeId}/${verb}`);
      expect(r.status === 200 || r.status === 409, `${verb}: ${r.text}`).toBe(true);
    }
    // A route that needs a body still says so, plainly.
    const create = await jsonButEmpty('/api/nodes');
    expect(create.status).toBe(400);
    expect(create.json.error.code).toBe('invalid_request');
  });

  it('pages the node list with limit and cursor, and keeps the original shape without them', async () => {
    const pager = await t.createUser();
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      created.push((await t.call('/api/nodes', { method: 'POST', token: pager.token, body: { name: `p${i}`, network: 'regtest' } })).json.data.nodeId);
    }
    const all = await t.call('/api/nodes', { token: pager.token });
    expect(Object.keys(all.json)).toEqual(['nodes']);
    expect(all.json.nodes.map((n: any) => n.nodeId)).toEqual(created);

    const seen: string[] = [];
    let cursor: string | null | undefined;
    const sizes: number[] = [];
    do {
      const page = await t.call(`/api/nodes?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: pager.token });
      expect(page.status, page.text).toBe(200);
      sizes.push(page.json.nodes.length);
      seen.push(...page.json.nodes.map((n: any) => n.nodeId));
      cursor = page.json.nextCursor;
      // A node created while paging shows up on a later page, nothing repeats or goes missing.
      if (sizes.length === 1) created.push((await t.call('/api/nodes', { method: 'POST', token: pager.token, body: { name: 'late', network: 'regtest' } })).json.data.nodeId);
    } while (cursor);
    expect(sizes).toEqual([2, 2, 2]);
    expect(seen).toEqual(created);

    for (const [query, message] of [
      ['limit=0', 'limit must be a whole number from 1 to 200'],
      ['limit=201', 'limit must be a whole number from 1 to 200'],
      ['limit=2&cursor=not-a-cursor!', 'cursor is not one this list gave: use nextCursor as it came'],
      ['limit=2&cursor=bm9kZTp4', 'cursor is not one this list gave: use nextCursor as it came'],
    ]) {
      const r = await t.call(`/api/nodes?${query}`, { token: pager.token });
      expect([query, r.status, r.json.error.message]).toEqual([query, 400, message]);
    }
    // Another user's cursor names a node that is not theirs: refused like a made-up one.
    const first = await t.call('/api/nodes?limit=1', { token: pager.token });
    const foreign = await t.call(`/api/nodes?limit=1&cursor=${first.json.nextCursor}`, { token: bob.token });
    expect(foreign.status).toBe(400);
  });

  it('answers unknown routes with the error body', async () => {
    const r = await t.call('/api/nope', { token: alice.token });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('not_found');
  });
});
