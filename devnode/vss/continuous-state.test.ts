// devnode as a VSS client (--vss-url), end to end: the real devnode process writing to the real VSS
// server of the service (started as the other VSS tests start it), read back with an independent
// client (test/helpers/vss-client.ts) under the node's own key.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../../test/helpers/server.ts';
import { createNodes } from '../../test/helpers/tenants.ts';
import { databaseLabel } from '../../test/helpers/database.ts';
import { vssClient, type VssKey } from '../../test/helpers/vss-client.ts';
import { NODE_STORE_DIR } from '../node-store.ts';
import { cleanUpDevnodes, startNode, stopNode, tempStorage, type DevnodeProcess } from '../process-for-tests.ts';
import { vssIdentityFromMnemonic } from './key.ts';

const PASSWORD = 'correct horse battery';
const MNEMONIC = 'ocean orbit pepper planet quartz rocket saddle tunnel umbrella velvet walnut yellow';
const FENCE = '__rln_instance__';

describe(`devnode continuous state against the service's VSS, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let url: string;
  /** Reads the store as the node would (same key), independently of devnode's client. */
  let reader: ReturnType<typeof vssClient>;
  const identity = vssIdentityFromMnemonic(MNEMONIC);
  const started: DevnodeProcess[] = [];

  const start = async (storage: string, vssUrl = url) => {
    const node = await startNode(storage, { auth: ['--disable-authentication', '--vss-url', vssUrl] });
    started.push(node);
    return node;
  };

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.createUser();
    // A node row owns the store; the runtime's own daemon for it is kept off the store.
    const [nodeId] = await createNodes(t, alice, [{ name: 'vss-client', settings: { continuousState: false } }], { untilRunning: false });
    url = await t.server.services.vss.issueUrl(alice.id, nodeId);
    const asNode: VssKey = { publicKey: Buffer.from(identity.pubkey, 'hex'), token: (time) => identity.token(time) };
    reader = vssClient(url, asNode);
  }, 60_000);
  afterAll(async () => {
    cleanUpDevnodes();
    await t?.stop();
  });

  const storage = tempStorage();
  let first: DevnodeProcess;

  it('takes the fence at unlock (version 0, its instance id) and answers /vssbackupinfo', async () => {
    first = await start(storage);
    expect(first.stdout()).toMatch(/continuous state on \(VSS at 127\.0\.0\.1:\d+\)/);
    expect(first.stdout()).not.toContain(url.split('/').at(-1)); // the credential is never logged
    expect((await first.call('POST', '/init', { password: PASSWORD, mnemonic: MNEMONIC })).status).toBe(200);
    expect((await first.call('GET', '/vssbackupinfo')).body.name).toBe('LockedNode');
    expect(await first.call('POST', '/unlock', { password: PASSWORD })).toEqual({ status: 200, body: {} });
    const fence = await reader.get(identity.pubkey, FENCE);
    expect(fence.status).toBe(200);
    expect(fence.body.value.version).toBe(1); // created with version 0
    expect(fence.body.value.value.toString()).toMatch(/^[0-9a-f-]{36}$/);
    expect(await first.call('GET', '/vssbackupinfo')).toEqual({
      status: 200,
      body: { backup_exists: false, server_version: null, backup_required: false, pending_kv_writes: 0 },
    });
  });

  it('acknowledges a state change only once VSS has it: each /address answer finds the store written', async () => {
    for (let i = 1; i <= 3; i++) {
      expect((await first.call('POST', '/address')).status).toBe(200);
      // Read right after the answer: the write happened before it.
      const manager = await reader.get(identity.pubkey, 'manager');
      expect(manager.status).toBe(200);
      expect(manager.body.value.version).toBe(1); // a version -1 write leaves the key at version 1
      expect(identity.open(manager.body.value.value).toString()).toBe(JSON.stringify({ addressesIssued: i }));
    }
    expect((await first.call('GET', '/vssbackupinfo')).body).toEqual({
      backup_exists: true,
      server_version: 1,
      backup_required: false,
      pending_kv_writes: 0,
    });
    // The value leaves the node sealed: the server never holds the plain state.
    const raw = (await reader.get(identity.pubkey, 'manager')).body.value.value.toString();
    expect(raw).not.toContain('addressesIssued');
  });

  it('a state change VSS refuses is not acknowledged, and stays pending until the next write gets through', async () => {
    // A new URL for the node: the running daemon's credential stops working (the server refuses it).
    const nodeId = url.split('/').at(-2)!;
    const newUrl = await t.server.services.vss.issueUrl(alice.id, nodeId);
    const refused = await first.call('POST', '/address');
    expect(refused.status).toBe(503);
    expect(refused.body.name).toBe('VssUnavailable');
    expect((await first.call('GET', '/vssbackupinfo')).body.name).toBe('VssUnavailable');
    url = newUrl;
    reader = vssClient(url, { publicKey: Buffer.from(identity.pubkey, 'hex'), token: (time) => identity.token(time) });
    expect(await stopNode(first)).toEqual({ code: 0, signal: null });
  });

  it('a second copy finding another instance in the fence refuses to unlock, with a clear error', async () => {
    // The first copy was stopped with an old URL, so its fence stayed: as after a crash.
    const fence = (await reader.get(identity.pubkey, FENCE)).body.value.value.toString();
    const second = await start(storage);
    const refused = await second.call('POST', '/unlock', { password: PASSWORD });
    expect(refused.status).toBe(409);
    expect(refused.body.name).toBe('VssFenced');
    expect(refused.body.error).toContain(fence);
    expect(refused.body.error).toContain('/vssclearfence');
    expect((await second.call('POST', '/address')).body.name).toBe('LockedNode');
    expect((await reader.get(identity.pubkey, FENCE)).body.value.value.toString()).toBe(fence);
    first = second;
  });

  it('/vssclearfence needs the password and a locked node, then frees the fence for this copy', async () => {
    expect((await first.call('POST', '/vssclearfence', {})).status).toBe(400);
    expect((await first.call('POST', '/vssclearfence', { password: 'not the password' })).body.name).toBe('WrongPassword');
    expect((await reader.get(identity.pubkey, FENCE)).status).toBe(200);
    expect(await first.call('POST', '/vssclearfence', { password: PASSWORD })).toEqual({ status: 200, body: {} });
    expect((await reader.get(identity.pubkey, FENCE)).status).toBe(404);
    expect(first.stdout()).toContain('VSS fence cleared');
    expect((await first.call('POST', '/unlock', { password: PASSWORD })).status).toBe(200);
    expect((await first.call('POST', '/vssclearfence', { password: PASSWORD })).body.name).toBe('UnlockedNode');
    // The write refused earlier was kept locally; this copy's next write sends the whole state.
    expect((await first.call('POST', '/address')).status).toBe(200);
    const manager = await reader.get(identity.pubkey, 'manager');
    expect(identity.open(manager.body.value.value).toString()).toBe(JSON.stringify({ addressesIssued: 5 }));
  });

  it('a clean stop frees the fence; a copy that lost its local state restores every key at unlock', async () => {
    const addressBefore = (await first.call('POST', '/address')).body.address;
    expect(await stopNode(first)).toEqual({ code: 0, signal: null });
    expect((await reader.get(identity.pubkey, FENCE)).status).toBe(404);

    rmSync(join(storage, NODE_STORE_DIR), { recursive: true, force: true });
    const restored = await start(storage);
    expect((await restored.call('POST', '/unlock', { password: PASSWORD })).status).toBe(200);
    expect(restored.stdout()).toContain('local node state missing: restored 1 keys from VSS');
    // The address index came back: the next address is new, not the first one again.
    const next = (await restored.call('POST', '/address')).body.address;
    expect(next).not.toBe(addressBefore);
    const manager = await reader.get(identity.pubkey, 'manager');
    expect(identity.open(manager.body.value.value).toString()).toBe(JSON.stringify({ addressesIssued: 7 }));
    await stopNode(restored);
  });

  it('a fresh storage initialised with the same mnemonic is the same store: it restores too', async () => {
    const fresh = await start(tempStorage());
    expect((await fresh.call('POST', '/init', { password: 'another password', mnemonic: MNEMONIC })).status).toBe(200);
    expect((await fresh.call('POST', '/unlock', { password: 'another password' })).status).toBe(200);
    expect(fresh.stdout()).toContain('restored 1 keys from VSS');
    expect((await fresh.call('GET', '/vssbackupinfo')).body).toMatchObject({ backup_exists: true, server_version: 1 });
    await stopNode(fresh);
  });

  it('refuses plain http to a non-loopback host without --vss-allow-http', async () => {
    await expect(start(tempStorage(), 'http://vss.example:3000/vss/x/y')).rejects.toThrow(/plain http on a non-loopback host/);
  });
});
