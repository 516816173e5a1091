// A node whose storage is lost (issue #43), through real HTTP against real devnode daemons on the
// process runtime: its storage directory deleted, the reconcile loop marks it STORAGE_LOST (with
// NODE_STORAGE_LOST and NODE_STATUS_UPDATED at its webhook, the daemon stopped); POST .../recover
// brings it up RUNNING on a fresh, empty volume, not initialised; the wallet's mnemonic through the
// node path gives the same node pubkey. An initialised node whose daemon answers an unlock as never
// initialised is marked too. And the refusals: another account (404), a viewer and
// a developer (403), a node not STORAGE_LOST (409 storage_not_lost), a bad id (400).
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { addMember } from '../helpers/members.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { cleanUpDevnodes } from '../../devnode/process-for-tests.ts';
import { initWallet, nodeRecord, PASSWORD, unlock } from '../backups/backup-helpers.ts';

describe(`a node whose storage was lost, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let receiver: Receiver;
  let nodeId: string;
  let probedId: string;
  let pausedId: string;
  let mnemonic: string;
  let pubkey: string;

  const recover = (user: TestUser, id: string) => t.call(`/api/nodes/${id}/recover`, { method: 'POST', token: user.token });
  const gateway = async (user: TestUser, id: string, route: string, body?: unknown) => {
    const res = await fetch(`${t.config.nodeApiUrl}/${user.id}/${id}/${route}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  const storageOf = (id: string) => join(t.config.dataDir, 'nodes', id, 'storage');
  const statusOf = async (id: string) => (await nodeRecord(t, alice, id)).status;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_ALLOW_HTTP: 'true' });
    ({ alice, bob } = await createTenants(t));
    [nodeId, probedId, pausedId] = await createNodes(t, alice, [{ name: 'lost', settings: { webhookUrl: receiver.url } }, { name: 'probed' }, { name: 'paused' }]);
    mnemonic = await initWallet(t, alice, nodeId);
    await unlock(t, alice, nodeId);
    pubkey = (await gateway(alice, nodeId, 'nodeinfo')).json.pubkey;
    expect(pubkey).toMatch(/^[0-9a-f]{66}$/);
  });
  afterAll(async () => {
    await t?.stop();
    await receiver?.close();
    cleanUpDevnodes();
  });

  it('refuses to recover a node whose storage is there (409 storage_not_lost), and a bad id (400)', async () => {
    const r = await recover(alice, nodeId);
    expect(r.status, r.text).toBe(409);
    expect(r.json.error).toMatchObject({ code: 'storage_not_lost', details: { status: 'RUNNING' } });
    const bad = await recover(alice, 'not-a-node-id');
    expect(bad.status, bad.text).toBe(400);
    expect(bad.json.error.code).toBe('invalid_request');
    expect(await statusOf(nodeId)).toBe('RUNNING');
  });

  it('marks the node STORAGE_LOST once its storage directory is deleted, stops its daemon, and tells its webhook', async () => {
    rmSync(storageOf(nodeId), { recursive: true, force: true });
    await expect.poll(() => statusOf(nodeId), { timeout: 15_000 }).toBe('STORAGE_LOST');
    expect(await nodeRecord(t, alice, nodeId)).toMatchObject({ status: 'STORAGE_LOST', locked: true });
    await expect.poll(async () => (await t.server.runtime.status(nodeId)).state, { timeout: 15_000 }).not.toBe('running');
    // Nothing made an empty volume behind its back: the reconcile loop does not restart it.
    await new Promise((res) => setTimeout(res, 2_500));
    expect(existsSync(storageOf(nodeId))).toBe(false);

    const all = await receiver.waitFor((got) => got.some((w) => w.json?.eventType === 'NODE_STORAGE_LOST'));
    expect(all.find((w) => w.json?.eventType === 'NODE_STORAGE_LOST')!.json).toMatchObject({
      nodeId,
      details: { nodeId, detectedBy: 'volume', reason: expect.stringContaining('volume is gone') },
    });
    expect(all.some((w) => w.json?.eventType === 'NODE_STATUS_UPDATED' && w.json.details.status === 'STORAGE_LOST')).toBe(true);
    // Metered as no node time: its status changes are recorded as STORAGE_LOST, which no bill counts.
    const [last] = await t.server.db.query<{ status: string }>('SELECT status FROM node_status_changes WHERE node_id = $1 ORDER BY changed_at DESC, id DESC LIMIT 1', [nodeId]);
    expect(last?.status).toBe('STORAGE_LOST');
    const timeline = await t.call(`/api/nodes/${nodeId}/events`, { token: alice.token });
    expect(timeline.status, timeline.text).toBe(200);
    expect(timeline.text).toContain('NODE_STORAGE_LOST');
  });

  it('refuses start, stop, upgrade and calls to the daemon while STORAGE_LOST', async () => {
    for (const action of ['start', 'stop', 'upgrade']) {
      const r = await t.call(`/api/nodes/${nodeId}/${action}`, { method: 'POST', token: alice.token });
      expect(r.status, `${action}: ${r.text}`).toBe(409);
      expect(r.json.error.code, action).toBe('node_storage_lost');
    }
    const call = await gateway(alice, nodeId, 'nodeinfo');
    expect(call.status).toBe(409);
  });

  it("refuses another account's recover (404), a viewer's and a developer's (403), changing nothing", async () => {
    const theirs = await recover(bob, nodeId);
    expect(theirs.status, theirs.text).toBe(404);
    expect(theirs.json.error.code).toBe('node_not_found');
    for (const role of ['viewer', 'developer'] as const) {
      const member = await addMember(t, alice.id, role);
      const r = await recover(member, nodeId);
      expect(r.status, r.text).toBe(403);
      expect(r.json.error.code).toBe('forbidden_role');
    }
    expect(await statusOf(nodeId)).toBe('STORAGE_LOST');
  });

  it('recovers it: a recover build, RUNNING on a fresh empty volume, locked and not initialised', async () => {
    const r = await recover(alice, nodeId);
    expect(r.status, r.text).toBe(200);
    expect(r.json.data).toEqual({ nodeId, status: 'STARTING' });
    await expect.poll(() => statusOf(nodeId), { timeout: 30_000 }).toBe('RUNNING');
    const node = await nodeRecord(t, alice, nodeId);
    expect(node).toMatchObject({ status: 'RUNNING', locked: true, initialized: false });
    expect(node.builds.at(-1)).toMatchObject({ action: 'recover', buildStatus: 'SUCCESS' });
    expect(existsSync(storageOf(nodeId))).toBe(true);
    expect(readdirSync(storageOf(nodeId)).filter((f) => f.startsWith('devnode-state'))).toEqual([]);
    // The daemon says so too: it has no wallet (and, known as not initialised, the node is not marked lost again).
    const unlocking = await gateway(alice, nodeId, 'unlock', { password: PASSWORD });
    expect(unlocking).toMatchObject({ status: 403, json: { name: 'NotInitialized' } });
    expect(await statusOf(nodeId)).toBe('RUNNING');
    // The node is no longer STORAGE_LOST: a second recover is refused.
    expect((await recover(alice, nodeId)).json.error.code).toBe('storage_not_lost');
    const audit = await t.call('/api/audit-events', { token: alice.token });
    expect(audit.json.events.filter((e: any) => e.action === 'node.recovered' && e.target === nodeId && e.outcome === 'succeeded')).toHaveLength(1);
  });

  it('the same mnemonic through the node path gives the same wallet (node pubkey), and the service keeps no trace of it', async () => {
    const init = await gateway(alice, nodeId, 'init', { password: PASSWORD, mnemonic });
    expect(init.status, JSON.stringify(init.json)).toBe(200);
    await expect.poll(async () => (await nodeRecord(t, alice, nodeId)).initialized, { timeout: 5_000 }).toBe(true);
    await unlock(t, alice, nodeId);
    expect((await gateway(alice, nodeId, 'nodeinfo')).json.pubkey).toBe(pubkey);
    const words = mnemonic.split(' ').slice(0, 4).join(' ');
    for (const [table, column] of [['node_events', 'payload'], ['audit_events', 'details']] as const) {
      const rows = await t.server.db.query<{ text: string }>(`SELECT ${column}::text AS text FROM ${table}`);
      expect(rows.map((r) => r.text).join('\n'), table).not.toContain(words);
    }
  });

  it('a start of a paused node whose storage is gone makes no empty volume: the build fails and the node is STORAGE_LOST', async () => {
    expect((await t.call(`/api/nodes/${pausedId}/stop`, { method: 'POST', token: alice.token })).status).toBe(200);
    await expect.poll(() => statusOf(pausedId), { timeout: 15_000 }).toBe('PAUSED');
    rmSync(storageOf(pausedId), { recursive: true, force: true });
    const started = await t.call(`/api/nodes/${pausedId}/start`, { method: 'POST', token: alice.token });
    expect(started.status, started.text).toBe(200);
    await expect.poll(() => statusOf(pausedId), { timeout: 15_000 }).toBe('STORAGE_LOST');
    const node = await nodeRecord(t, alice, pausedId);
    expect(node.builds.at(-1)).toMatchObject({ action: 'start', buildStatus: 'FAILURE', error: expect.stringContaining('volume is gone') });
    expect(existsSync(storageOf(pausedId))).toBe(false);
    const [event] = await t.server.db.query<{ payload: any }>(`SELECT payload FROM node_events WHERE node_id = $1 AND event_type = 'NODE_STORAGE_LOST'`, [pausedId]);
    expect(event?.payload.details).toMatchObject({ detectedBy: 'volume' });
  });

  it('refuses an RLN backup restore through the node path into a node with continuous state on; other nodes pass it to the daemon', async () => {
    const body = { backup_path: 'rln-cloud-backup-user-a.rlnbackup', password: PASSWORD };
    const setContinuousState = async (on: boolean) => {
      const changed = await t.call(`/api/nodes/${nodeId}/settings`, { method: 'POST', token: alice.token, body: { settings: { continuousState: on } } });
      expect(changed.status, changed.text).toBe(200);
    };
    await setContinuousState(false);
    const passed = await gateway(alice, nodeId, 'restore', body);
    expect(passed.json.rln_cloud?.code).not.toBe('restore_refused_continuous_state');
    await setContinuousState(true);
    const refused = await gateway(alice, nodeId, 'restore', body);
    expect(refused.status).toBe(409);
    expect(refused.json.rln_cloud.code).toBe('restore_refused_continuous_state');
  });

  it('marks an initialised node whose daemon answers an unlock as never initialised', async () => {
    await initWallet(t, alice, probedId);
    // Its wallet's files go, and its daemon restarts (the reconcile loop starts it again): the folder is
    // there, the wallet is not. RLN's /nodeinfo answers LockedNode either way; an unlock tells.
    for (const file of readdirSync(storageOf(probedId))) rmSync(join(storageOf(probedId), file), { recursive: true, force: true });
    const { pid } = await t.server.runtime.status(probedId);
    process.kill(pid!, 'SIGKILL');
    await expect.poll(async () => (await t.server.runtime.status(probedId)).pid, { timeout: 15_000 }).not.toBe(pid);
    await expect.poll(async () => (await gateway(alice, probedId, 'nodeinfo')).json.name, { timeout: 15_000 }).toBe('LockedNode');
    const refused = await gateway(alice, probedId, 'unlock', { password: PASSWORD });
    expect(refused).toMatchObject({ status: 403, json: { name: 'NotInitialized' } });
    expect(await nodeRecord(t, alice, probedId)).toMatchObject({ status: 'STORAGE_LOST', locked: true });
    const [event] = await t.server.db.query<{ payload: any }>(`SELECT payload FROM node_events WHERE node_id = $1 AND event_type = 'NODE_STORAGE_LOST'`, [probedId]);
    expect(event?.payload.details).toMatchObject({ detectedBy: 'daemon', reason: expect.stringContaining('never initialised') });
    await expect.poll(async () => (await t.server.runtime.status(probedId)).state, { timeout: 15_000 }).not.toBe('running');
  });
});
