// The original service's own public API test suite, replayed against this service with only its
// base URLs changed: its headers (a bare token, JSON content type on GETs), its bodies and its order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from '../helpers/database.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { OriginalApiSuite } from './original-clients.ts';

const PASSWORD = 'original-suite-password';
const LOCKED = { error: 'Node is locked (hint: call unlock)', code: 403 };

describe(`the original service's API test suite on ${databaseLabel()}`, () => {
  let t: TestServer;
  let user: TestUser;
  let suite: OriginalApiSuite;
  beforeAll(async () => {
    t = await startTestServer();
    user = await t.createUser('scale');
    suite = new OriginalApiSuite(t.base, user.token, t.config.nodeApiUrl);
  });
  afterAll(() => t?.stop());

  it('creates, reaches, inits, unlocks, uses and destroys a node, as the suite does', async () => {
    const created = await suite.createNode('original-suite', 'regtest');
    expect(created.status, created.text).toBe(200);
    // The SPEC's fields at `data`, and the full node at `data.node`, where the suite reads it.
    expect(created.json.data).toMatchObject({ nodeId: expect.any(String), name: 'original-suite', network: 'regtest', status: 'STARTING' });
    const id: string = created.json.data.node.nodeId;
    expect(id).toBe(created.json.data.nodeId);

    const running = await suite.waitUntilRunning(id);
    expect(running).toMatchObject({ nodeId: id, status: 'RUNNING', peerDNS: expect.any(String), peerPort: expect.any(Number) });

    const health = await suite.health(id);
    expect(health.status, health.text).toBe(200);

    const locked = await suite.nodeinfoOnceUp(running.invoke_url);
    expect(locked.status).toBe(403);
    expect(locked.json).toMatchObject(LOCKED);

    const init = await suite.nodeCall(running.invoke_url, 'init', 'POST', { password: PASSWORD });
    expect(init.status, init.text).toBe(200);
    expect(init.json.mnemonic).toEqual(expect.any(String));

    const unlocked = await suite.unlock(id, { password: PASSWORD, announce_addresses: [], announce_alias: 'suite-alias', network: 'regtest', node_endpoint: running.invoke_url });
    expect(unlocked.status, unlocked.text).toBe(200);

    const address = await suite.nodeCall(running.invoke_url, 'address', 'POST', {});
    expect(address.status, address.text).toBe(200);
    expect(address.json.address).toEqual(expect.any(String));

    const destroyed = await suite.destroy(id);
    expect(destroyed.status, destroyed.text).toBe(200);
    expect((await suite.getNode(id)).json?.data?.status ?? 'gone').toMatch(/DESTROY|gone/);
  });

  it("refuses the suite's bare token once it is wrong, in the management API's error body", async () => {
    const stranger = new OriginalApiSuite(t.base, `rlnc_${'A'.repeat(43)}`, t.config.nodeApiUrl);
    const r = await stranger.getNode('f'.repeat(32));
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('unauthorized');
  });
});
