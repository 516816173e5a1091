// The mobile wallet that ran its users' nodes on the original service, replayed with only its base
// URLs changed: the invoke URL pasted with its trailing slash and `/<route>` appended, the
// Authorization value sent as stored (bare or with `Bearer `), RLN's flat unlock body with the
// wallet's own chain hosts, and every failure shown to its user as `new Error(body.error)`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from '../helpers/database.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { createNodes } from '../helpers/tenants.ts';
import { WalletNodeClient, walletUnlockBody } from './original-clients.ts';

const PASSWORD = 'wallet-user-password';

describe(`the original service's wallet on ${databaseLabel()}`, () => {
  let t: TestServer;
  let user: TestUser;
  let nodeId: string;
  let invokeUrl: string;
  beforeAll(async () => {
    t = await startTestServer();
    user = await t.createUser('wallet');
    [nodeId] = await createNodes(t, user, [{ name: 'wallet-node' }]);
    invokeUrl = (await t.call(`/api/nodes/${nodeId}`, { token: user.token })).json.data.invoke_url;
    expect(invokeUrl.endsWith('/')).toBe(true);
  });
  afterAll(() => t?.stop());

  for (const form of ['bare', 'Bearer'] as const) {
    it(`inits, unlocks with the flat body and uses the node with the token stored ${form}`, async () => {
      const stored = form === 'bare' ? user.token : `Bearer ${user.token}`;
      const wallet = new WalletNodeClient(invokeUrl, stored);
      if (form === 'bare') {
        // The node's own errors pass through: RLN's text is what the wallet shows.
        expect((await wallet.failure('nodeinfo')).message).toBe('Node is locked (hint: call unlock)');
        expect((await wallet.call('init', { password: PASSWORD })).mnemonic).toEqual(expect.any(String));
      } else {
        await wallet.call('lock', {});
      }
      expect(await wallet.call('unlock', walletUnlockBody(PASSWORD))).toEqual({});
      expect((await wallet.call('nodeinfo')).pubkey).toEqual(expect.any(String));
      expect((await wallet.call('address', {})).address).toEqual(expect.any(String));
    });
  }

  it("shows the service's own refusals as sentences, never [object Object]", async () => {
    const wallet = new WalletNodeClient(invokeUrl, user.token);
    // A bad value in the unlock body: a 400 that names the field.
    const badPort = await wallet.failure('unlock', { ...walletUnlockBody(PASSWORD), bitcoind_rpc_port: 'eighteen' });
    expect(badPort.status).toBe(400);
    expect(badPort.message).toMatch(/bitcoind_rpc_port must be a port number/);
    expect(badPort.body).toMatchObject({ code: 400, name: 'InvalidRequest', rln_cloud: { code: 'invalid_request' } });

    // A token that is not (or no longer) good.
    const stranger = new WalletNodeClient(invokeUrl, `rlnc_${'B'.repeat(43)}`);
    const unauthorized = await stranger.failure('nodeinfo');
    expect(unauthorized).toMatchObject({ status: 401, body: { code: 401, name: 'Unauthorized' } });
    expect(unauthorized.message).toMatch(/API token is invalid/);

    // A paused node: the wallet's backend stops it, the wallet still calls it.
    expect((await t.call(`/api/nodes/${nodeId}/stop`, { method: 'POST', token: user.token })).status).toBe(200);
    await t.waitForStatus(user, nodeId, 'PAUSED');
    const paused = await wallet.failure('nodeinfo');
    expect(paused).toMatchObject({ status: 409, body: { code: 409, name: 'NodeNotRunning', rln_cloud: { code: 'node_not_running' } } });
    expect(paused.message).toMatch(/is PAUSED, not RUNNING/);
    expect(paused.message).not.toContain('[object Object]');

    // ... and starts it again, as the wallet's backend does for a PAUSED node.
    expect((await t.call(`/api/nodes/${nodeId}/start`, { method: 'POST', token: user.token, headers: { 'content-type': 'application/json' } })).status).toBe(200);
    await t.waitForStatus(user, nodeId, 'RUNNING', 60_000);
    expect(await wallet.call('unlock', walletUnlockBody(PASSWORD))).toEqual({});
  });

  it("another user's token reaches nothing, in either form", async () => {
    const bob = await t.createUser('wallet');
    for (const stored of [bob.token, `Bearer ${bob.token}`]) {
      const r = await new WalletNodeClient(invokeUrl, stored).failure('nodeinfo');
      expect(r).toMatchObject({ status: 404, body: { code: 404, name: 'NodeNotFound' } });
      expect(r.message).toMatch(/was not found/);
    }
  });
});
