// Customers' own node tokens (issue #40, point 4) over real HTTP with devnode daemons, which enforce
// RLN's Biscuit rules: minted, listed and revoked through the API; an admin, a read-only and a
// custom token do what RLN's rules say through the bearer gateway, raw or `Bearer `-prefixed; a
// forged, expired, revoked or other-node token is refused by the gateway before the node (the
// node's request log does not grow); a demoted minter's admin token stops; a revocation reaches the
// node, and again after the node lost its revoked list (a fresh volume) and was unlocked.
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from '../helpers/database.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { addMember } from '../helpers/members.ts';
import { rawRequest } from './gateway-client.ts';
import { generateRootKey, mintNodeToken } from '../../src/rln/biscuit-mint.ts';

const PASSWORD = 'node-token-password-1';

describe(`customers' node tokens through the bearer gateway, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let owner: TestUser;
  let developer: TestUser;
  let stranger: TestUser;
  let nodeId: string;
  let otherNodeId: string;

  const mint = (user: TestUser, body: unknown, id = nodeId) => t.call(`/api/nodes/${id}/node-tokens`, { method: 'POST', token: user.token, body });
  const via = (authorization: string | undefined, route: string, method = 'GET', id = nodeId) =>
    rawRequest(t.config.nodeApiUrl, `/${owner.id}/${id}/${route}`, {
      method,
      headers: { ...(authorization === undefined ? {} : { authorization }), ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      body: method === 'POST' ? '{}' : undefined,
    });
  const restPort = async (id: string) => (await t.server.db.query<{ rest_port: number }>('SELECT rest_port FROM nodes WHERE id = $1', [id]))[0]!.rest_port;
  /** Straight to the node's own port, past the gateway: what RLN itself decides. */
  const direct = async (authorization: string, route: string, method = 'GET') =>
    rawRequest(`http://127.0.0.1:${await restPort(nodeId)}`, `/${route}`, {
      method,
      headers: { authorization, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      body: method === 'POST' ? '{}' : undefined,
    });
  const nodeDir = (id: string) => join(t.config.dataDir, 'nodes', id);
  const logLines = () => {
    const path = join(nodeDir(nodeId), 'daemon.log');
    return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((l) => / (GET|POST) \//.test(l)).length : 0;
  };
  const settle = () => new Promise((r) => setTimeout(r, 300));
  /** A request the gateway must refuse itself: its own error body, and nothing more in the node's log. */
  const refusedBeforeNode = async (authorization: string, route = 'nodeinfo', method = 'GET') => {
    await settle();
    const before = logLines();
    const res = await via(authorization, route, method);
    await settle();
    expect(logLines()).toBe(before);
    return res;
  };
  const findFile = (dir: string, name: string): string | undefined => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (entry === name) return path;
      if (statSync(path).isDirectory()) {
        const found = findFile(path, name);
        if (found) return found;
      }
    }
    return undefined;
  };
  const createRunning = async (name: string) => {
    const created = await t.call('/api/nodes', { method: 'POST', token: owner.token, body: { name, network: 'regtest' } });
    expect(created.status, created.text).toBe(200);
    const id = created.json.data.nodeId as string;
    await t.waitForStatus(owner, id, 'RUNNING', 45_000);
    return id;
  };

  beforeAll(async () => {
    t = await startTestServer();
    owner = await t.createUser();
    stranger = await t.createUser();
    developer = await addMember(t, owner.id, 'developer');
    nodeId = await createRunning('tokens');
    otherNodeId = await createRunning('other');
    const init = await t.call(`/api/nodes/${nodeId}/init`, { method: 'POST', token: owner.token, body: { password: PASSWORD } });
    expect(init.status, init.text).toBe(200);
    const unlock = await t.call(`/api/nodes/${nodeId}/unlock`, { method: 'POST', token: owner.token, body: { password: PASSWORD } });
    expect(unlock.status, unlock.text).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
  });

  it('mints a token shown once, lists it without the token, and refuses bad input, another account and a viewer', async () => {
    const minted = await mint(owner, { role: 'read-only' });
    expect(minted.status, minted.text).toBe(200);
    expect(minted.headers.get('cache-control')).toBe('no-store');
    const { token, id, revocationIds, nodeUrl } = minted.json.data;
    expect(token).toMatch(/^[A-Za-z0-9_-]+=*$/);
    expect(revocationIds).toHaveLength(1);
    expect(nodeUrl).toBe(`${t.config.nodeApiUrl}/${owner.id}/${nodeId}/`);
    const listed = await t.call(`/api/nodes/${nodeId}/node-tokens`, { token: developer.token });
    expect(listed.status).toBe(200);
    const row = listed.json.data.find((r: any) => r.id === id);
    expect(row).toMatchObject({ role: 'read-only', status: 'valid', mintedBy: owner.id, revokedAt: null });
    expect(listed.text).not.toContain(token);
    // Never in clear in the database.
    const stored = await t.server.db.query<Record<string, unknown>>('SELECT * FROM node_tokens WHERE id = $1', [id]);
    expect(JSON.stringify(stored)).not.toContain(token);

    const bad = [
      [{ role: 'owner' }, 'role'],
      [{ role: 'admin', routes: ['/nodeinfo'] }, 'routes'],
      [{ role: 'custom' }, 'routes'],
      [{ role: 'custom', routes: ['nodeinfo'] }, 'routes'],
      [{ role: 'admin', expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
      [{ role: 'admin', expiresAt: 'tomorrow' }, 'expiresAt'],
    ] as const;
    for (const [body, field] of bad) {
      const res = await mint(owner, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.code).toBe('invalid_request');
      expect(res.json.error.details?.field).toBe(field);
    }
    expect((await mint(owner, { role: 'admin', extra: 1 })).status).toBe(400);
    // Another account's node is a missing one, for every route.
    expect((await mint(stranger, { role: 'admin' })).json.error.code).toBe('node_not_found');
    expect((await t.call(`/api/nodes/${nodeId}/node-tokens`, { token: stranger.token })).status).toBe(404);
    expect((await t.call(`/api/nodes/${nodeId}/node-tokens/${id}`, { method: 'DELETE', token: stranger.token })).status).toBe(404);
    // A viewer and a read-only API token mint nothing.
    const viewer = await addMember(t, owner.id, 'viewer');
    expect((await mint(viewer, { role: 'read-only' })).json.error.code).toBe('forbidden_role');
    const readOnly = await t.server.services.accounts.createToken(owner.email, 'reader', undefined, { readOnly: true });
    const byReadOnly = await t.call(`/api/nodes/${nodeId}/node-tokens`, { method: 'POST', token: readOnly.token, body: { role: 'read-only' } });
    expect(byReadOnly.json.error.code).toBe('forbidden_scope');
    expect((await t.call(`/api/nodes/${nodeId}/node-tokens/nope`, { method: 'DELETE', token: owner.token })).status).toBe(404);
  });

  it("admin, read-only and custom tokens do what RLN's rules say, raw or Bearer-prefixed, and the node gets exactly `Bearer <token>`", async () => {
    const admin = (await mint(developer, { role: 'admin' })).json.data.token as string;
    const reader = (await mint(owner, { role: 'read-only' })).json.data.token as string;
    const custom = (await mint(owner, { role: 'custom', routes: ['/nodeinfo', '/address'] })).json.data.token as string;

    for (const form of [`Bearer ${admin}`, admin, `bearer ${admin}`]) {
      const res = await via(form, 'address', 'POST');
      expect(res.status, `${form.slice(0, 10)}: ${res.text}`).toBe(200);
      expect(res.json.address).toBeTruthy();
    }
    expect((await via(admin, 'nodeinfo')).status).toBe(200);
    expect((await via(reader, 'nodeinfo')).status).toBe(200);
    expect((await via(`Bearer ${reader}`, 'listchannels')).status).toBe(200);
    const readerWrites = await via(reader, 'address', 'POST');
    expect(readerWrites.status).toBe(403);
    expect(readerWrites.json.rln_cloud?.code).toBe('forbidden_scope');
    expect((await via(reader, 'lock', 'POST')).status).toBe(403);
    expect((await via(custom, 'nodeinfo')).status).toBe(200);
    expect((await via(custom, 'address', 'POST')).status).toBe(200);
    expect((await via(custom, 'networkinfo')).status).toBe(403);
    // The node itself, past the gateway, applies the same rules to the same tokens.
    expect((await direct(`Bearer ${admin}`, 'address', 'POST')).status).toBe(200);
    expect((await direct(`Bearer ${reader}`, 'nodeinfo')).status).toBe(200);
    expect((await direct(`Bearer ${reader}`, 'address', 'POST')).status).toBe(403);
    expect((await direct(`Bearer ${custom}`, 'networkinfo')).status).toBe(403);
    // RLN's exact prefix only: the raw form reaches the node only through the gateway.
    expect((await direct(admin, 'nodeinfo')).status).toBe(401);
  });

  it('refuses a forged, an expired, a revoked and another node\'s token before the node', async () => {
    const forged = mintNodeToken(generateRootKey().privateKey, { role: 'admin', expiresAt: new Date(Date.now() + 3600_000) }).token;
    const otherNode = (await mint(owner, { role: 'admin' }, otherNodeId)).json.data.token as string;
    const soon = (await mint(owner, { role: 'admin', expiresAt: new Date(Date.now() + 1500).toISOString() })).json.data.token as string;
    const revokedMint = (await mint(owner, { role: 'admin' })).json.data;
    expect((await via(revokedMint.token, 'nodeinfo')).status).toBe(200);
    const revoke = await t.call(`/api/nodes/${nodeId}/node-tokens/${revokedMint.id}`, { method: 'DELETE', token: developer.token });
    expect(revoke.status, revoke.text).toBe(200);
    expect(revoke.json.data).toMatchObject({ status: 'revoked', revokedReason: 'revoked' });
    await new Promise((r) => setTimeout(r, 1600));
    // The log does count what reaches the node (so an unchanged count below means something).
    const good = (await mint(owner, { role: 'admin' })).json.data.token as string;
    await settle();
    const before = logLines();
    expect((await via(good, 'nodeinfo')).status).toBe(200);
    await settle();
    expect(logLines()).toBeGreaterThan(before);

    for (const token of [forged, otherNode, soon, revokedMint.token]) {
      for (const form of [token, `Bearer ${token}`]) {
        const res = await refusedBeforeNode(form, 'address', 'POST');
        expect(res.status).toBe(401);
        expect(res.json.rln_cloud?.code).toBe('unauthorized'); // the gateway's body, not RLN's
      }
    }
    // The node itself was told: the revoked token is refused past the gateway too.
    expect((await direct(`Bearer ${revokedMint.token}`, 'nodeinfo')).status).toBe(401);
    // The other node's token works on its own node's path (its node is not unlocked: RLN's answer, not the gateway's 401).
    expect((await via(otherNode, 'nodeinfo', 'GET', otherNodeId)).status).not.toBe(401);
  });

  it("a demoted minter's admin token loses its power at once and is revoked; their read-only token stays", async () => {
    const member = await addMember(t, owner.id, 'developer');
    const admin = (await mint(member, { role: 'admin' })).json.data;
    const reader = (await mint(member, { role: 'read-only' })).json.data;
    expect((await via(admin.token, 'address', 'POST')).status).toBe(200);
    const demoted = await t.call(`/api/account/members/${member.id}`, { method: 'PATCH', token: owner.token, body: { role: 'viewer' } });
    expect(demoted.status, demoted.text).toBe(200);
    const res = await refusedBeforeNode(admin.token, 'address', 'POST');
    expect(res.status).toBe(401);
    expect((await via(reader.token, 'nodeinfo')).status).toBe(200);
    const deadline = Date.now() + 5000;
    let row: any;
    do {
      row = (await t.call(`/api/nodes/${nodeId}/node-tokens`, { token: owner.token })).json.data.find((r: any) => r.id === admin.id);
      if (row.status === 'revoked') break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < deadline);
    expect(row).toMatchObject({ status: 'revoked', revokedReason: 'minter_role' });
    expect((await direct(`Bearer ${admin.token}`, 'nodeinfo')).status).toBe(401);
    // Removed: everything they minted goes.
    expect((await t.call(`/api/account/members/${member.id}`, { method: 'DELETE', token: owner.token })).status).toBeLessThan(300);
    expect((await via(reader.token, 'nodeinfo')).status).toBe(401);
  });

  it("sends a node its revoked tokens again after it lost its own list and was unlocked", async () => {
    const revoked = (await mint(owner, { role: 'admin' })).json.data;
    expect((await t.call(`/api/nodes/${nodeId}/node-tokens/${revoked.id}`, { method: 'DELETE', token: owner.token })).status).toBe(200);
    expect((await direct(`Bearer ${revoked.token}`, 'nodeinfo')).status).toBe(401);
    // A rotation of the unlock seal's key re-seals the kept tokens too, and they still open.
    const sealedBefore = (await t.server.db.query<{ sealed_token: string }>('SELECT sealed_token FROM node_tokens WHERE id = $1', [revoked.id]))[0]!.sealed_token;
    await t.server.services.unlockSealKeys.rotate();
    const sealedAfter = (await t.server.db.query<{ sealed_token: string }>('SELECT sealed_token FROM node_tokens WHERE id = $1', [revoked.id]))[0]!.sealed_token;
    expect(sealedAfter).not.toBe(sealedBefore);
    expect((await t.call(`/api/nodes/${nodeId}/stop`, { method: 'POST', token: owner.token })).status).toBeLessThan(300);
    await t.waitForStatus(owner, nodeId, 'PAUSED', 45_000);
    // A fresh volume, as far as the revoked list goes.
    const list = findFile(nodeDir(nodeId), 'revoked_tokens.txt');
    expect(list).toBeDefined();
    rmSync(list!);
    expect((await t.call(`/api/nodes/${nodeId}/start`, { method: 'POST', token: owner.token })).status).toBeLessThan(300);
    await t.waitForStatus(owner, nodeId, 'RUNNING', 45_000);
    const unlock = await t.call(`/api/nodes/${nodeId}/unlock`, { method: 'POST', token: owner.token, body: { password: PASSWORD } });
    expect(unlock.status, unlock.text).toBe(200);
    expect((await direct(`Bearer ${revoked.token}`, 'nodeinfo')).status).toBe(401);
    expect(readFileSync(findFile(nodeDir(nodeId), 'revoked_tokens.txt')!, 'utf8')).toContain(revoked.revocationIds[0]);
  }, 120_000);
});
