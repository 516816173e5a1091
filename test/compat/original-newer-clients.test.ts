// More of the original service's clients (issue #41), replayed over HTTP with only their base URLs
// changed: the invoke URL in the original's form (`<gateway>/nodes/<user_id>/<node_id>/`) pasted as
// is, beside the URLs clients stored before; the older script's `/api//nodes`; and the VSS
// server's token check, `GET /api/verify`, which a spent quota never stops.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from '../helpers/database.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { createNodes } from '../helpers/tenants.ts';
import { OlderOriginalScript, vssVerify, WalletNodeClient } from './original-clients.ts';

const QUOTA = 5;

describe(`the original service's newer clients on ${databaseLabel()}`, () => {
  let t: TestServer;
  let user: TestUser;
  let nodeId: string;
  beforeAll(async () => {
    t = await startTestServer();
    await t.server.db.query(`INSERT INTO plans (name, max_nodes, api_calls_per_month, max_users) VALUES ('vss-tiny', 2, $1, 10)`, [QUOTA]);
    user = await t.createUser();
    [nodeId] = await createNodes(t, user, [{ name: 'newer-clients' }]);
  });
  afterAll(() => t?.stop());

  it("answers invoke_url in the original's form, which reaches the node pasted as is, and the URLs stored before still do", async () => {
    const node = (await t.call(`/api/nodes/${nodeId}`, { token: user.token })).json.data;
    expect(node.invoke_url).toBe(`${t.config.nodeApiUrl}/nodes/${user.id}/${nodeId}/`);
    // GET /api/nodes is rendered by the database: the same URL.
    const listed = (await t.call('/api/nodes', { token: user.token })).json.nodes.find((n: any) => n.nodeId === nodeId);
    expect(listed.invoke_url).toBe(node.invoke_url);
    for (const stored of [node.invoke_url, node.invoke_url.slice(0, -1), `${t.config.nodeApiUrl}/${user.id}/${nodeId}/`, `${t.config.nodeApiUrl}/${user.id}/${nodeId}`]) {
      const wallet = new WalletNodeClient(stored, `Bearer ${user.token}`);
      expect((await wallet.failure('nodeinfo')).message, stored).toBe('Node is locked (hint: call unlock)');
    }
    // The node itself, as the gateway knows it, under the original's prefix too.
    const self = await fetch(`${t.config.nodeApiUrl}/nodes/${user.id}/${nodeId}`, { headers: { authorization: user.token } });
    expect(self.status).toBe(200);
    // Another user's node under the new prefix is as unknown as under the old one.
    const other = await t.createUser();
    const refused = await fetch(`${t.config.nodeApiUrl}/nodes/${user.id}/${nodeId}/nodeinfo`, { headers: { authorization: `Bearer ${other.token}` } });
    expect(refused.status).toBe(404);
  });

  it("serves the older script's management calls at /api//nodes", async () => {
    const script = new OlderOriginalScript(t.base, user.token);
    const list = await script.call('/nodes', 'GET');
    expect(list.status, list.text).toBe(200);
    expect(list.json.nodes.map((n: any) => n.nodeId)).toContain(nodeId);
    const one = await script.call(`/nodes/${nodeId}`, 'GET');
    expect(one.status, one.text).toBe(200);
    expect(one.json.data.nodeId).toBe(nodeId);
    const health = await script.call(`//nodes//${nodeId}/health`, 'GET');
    expect(health.status, health.text).not.toBe(404);
  });

  it("answers the VSS server's verify call with the token's account, in either header form, and 401 otherwise", async () => {
    expect(await vssVerify(t.base, user.token)).toEqual({ ok: true, sub: user.id });
    expect(await vssVerify(t.base, `Bearer ${user.token}`)).toEqual({ ok: true, sub: user.id });
    // A token limited to one node, read-only, is still the account's token.
    const scoped = await t.call('/api/tokens', { method: 'POST', token: user.token, body: { name: 'vss', readOnly: true, nodeIds: [nodeId] } });
    expect(scoped.status, scoped.text).toBe(200);
    expect(await vssVerify(t.base, scoped.json.data.token)).toEqual({ ok: true, sub: user.id });
    for (const wrong of ['', 'Bearer ', `rlnc_${'A'.repeat(43)}`, `Bearer rlnc_${'A'.repeat(43)}`, 'Basic dXNlcjpwYXNz']) {
      const r = await vssVerify(t.base, wrong);
      expect(r, wrong).toMatchObject({ ok: false, status: 401, json: { error: { code: 'unauthorized' } } });
    }
    // A revoked token is refused.
    const revoked = await t.call('/api/tokens', { method: 'POST', token: user.token, body: { name: 'gone' } });
    const revokedToken = revoked.json.data.token;
    const revokedId = revoked.json.data.id;
    expect((await t.call(`/api/tokens/${revokedId}`, { method: 'DELETE', token: user.token })).status).toBeLessThan(300);
    expect(await vssVerify(t.base, revokedToken)).toMatchObject({ ok: false, status: 401 });
  });

  it("keeps answering verify once the account's month is spent: other services' checks are not the account's calls", async () => {
    const tiny = await t.createUser('vss-tiny');
    let refused = false;
    for (let i = 0; i < QUOTA * 3 && !refused; i++) refused = (await t.call('/api/nodes', { token: tiny.token })).status === 429;
    expect(refused).toBe(true);
    for (let i = 0; i < QUOTA * 2; i++) expect(await vssVerify(t.base, tiny.token)).toEqual({ ok: true, sub: tiny.id });
  });
});
