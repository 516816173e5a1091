// A node can leave (issue #41): POST /api/nodes/{id}/export through real HTTP against real devnode
// daemons. A running, initialised, unlocked node is exported: its final backup SUCCEEDED, the node
// EXPORTED, its daemon stopped by the reconcile loop, NODE_EXPORTED at its webhook, no plan slot;
// the downloaded file restores into a fresh devnode started here, outside the service, with the
// password; everything that would run the node or its wallet here again is refused. And the
// refusals: a viewer's or developer's export (403), another account's (404), a wrong confirmation
// (400), a wrong password (the backup fails, the node unlocked again and not exported).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { addMember } from '../helpers/members.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { SseClient } from '../events/sse-client.ts';
import { insertNodeBackup } from '../../src/db/backups.ts';
import { cleanUpDevnodes, startNode, tempStorage } from '../../devnode/process-for-tests.ts';
import { download, initWallet, nodeRecord, PASSWORD, sha256, unlock, waitForBackup } from './backup-helpers.ts';

describe(`exporting a node, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let receiver: Receiver;
  let nodeId: string;
  let otherId: string;
  let pubkey: string;
  let exported: any;
  let stream: SseClient;

  const exportNode = (user: TestUser, id: string, body: unknown) => t.call(`/api/nodes/${id}/export`, { method: 'POST', token: user.token, body });
  const gateway = async (user: TestUser, id: string, route: string, body: unknown = {}) => {
    const res = await fetch(`${t.config.nodeApiUrl}/${user.id}/${id}/${route}`, {
      method: route === 'nodeinfo' ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: route === 'nodeinfo' ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_ALLOW_HTTP: 'true' });
    ({ alice, bob } = await createTenants(t));
    [nodeId, otherId] = await createNodes(t, alice, [{ name: 'leaving', settings: { webhookUrl: receiver.url } }, { name: 'staying' }]);
    await initWallet(t, alice, nodeId);
    await unlock(t, alice, nodeId);
    await initWallet(t, alice, otherId);
    await unlock(t, alice, otherId);
    pubkey = (await gateway(alice, nodeId, 'nodeinfo')).json.pubkey;
    expect(pubkey).toEqual(expect.any(String));
    stream = await SseClient.open(t.base, '/api/events/stream', { token: alice.token });
    expect(stream.status).toBe(200);
  });
  afterAll(async () => {
    stream?.close();
    await t?.stop();
    await receiver?.close();
    cleanUpDevnodes();
  });

  it("refuses a viewer's and a developer's export (403), another account's (404) and a wrong confirmation (400), changing nothing", async () => {
    for (const role of ['viewer', 'developer'] as const) {
      const member = await addMember(t, alice.id, role);
      const r = await exportNode(member, nodeId, { password: PASSWORD, confirm: 'leaving' });
      expect(r.status, r.text).toBe(403);
      expect(r.json.error.code).toBe('forbidden_role');
    }
    const theirs = await exportNode(bob, nodeId, { password: PASSWORD, confirm: 'leaving' });
    expect(theirs.status, theirs.text).toBe(404);
    expect(theirs.json.error.code).toBe('node_not_found');

    const unconfirmed = await exportNode(alice, nodeId, { password: PASSWORD, confirm: 'Leaving' });
    expect(unconfirmed.status, unconfirmed.text).toBe(400);
    expect(unconfirmed.json.error).toMatchObject({ code: 'export_not_confirmed', details: { name: 'leaving' } });
    const missing = await exportNode(alice, nodeId, { password: PASSWORD });
    expect(missing.status).toBe(400);
    expect(missing.json.error.code).toBe('invalid_request');
    // The password never comes back in an error.
    const broken = await t.call(`/api/nodes/${nodeId}/export`, { method: 'POST', token: alice.token, body: `{"password": "${PASSWORD}"` });
    expect(broken.status).toBe(400);
    expect(broken.text).not.toContain(PASSWORD);

    // A backup in progress (another replica's, say): the export waits for it.
    const running = await insertNodeBackup(t.server.db, {
      id: 'e'.repeat(32), userId: alice.id, nodeId: otherId, network: 'regtest', imageVersion: 'devnode-0.1.0', wasUnlocked: false, runner: 'elsewhere',
    });
    const busy = await exportNode(alice, otherId, { password: PASSWORD, confirm: 'staying' });
    expect(busy.status, busy.text).toBe(409);
    expect(busy.json.error).toMatchObject({ code: 'backup_in_progress', details: { backupId: running.id } });
    await t.server.db.query('DELETE FROM backups WHERE id = $1', [running.id]);

    expect(await t.server.db.query('SELECT id FROM backups WHERE node_id = $1', [nodeId])).toEqual([]);
    expect((await nodeRecord(t, alice, nodeId)).status).toBe('RUNNING');
  });

  it('a wrong password: the backup FAILED, the node RUNNING and not exported, left as after any failed backup', async () => {
    const r = await exportNode(alice, nodeId, { password: 'not-the-password', confirm: 'leaving' });
    expect(r.status, r.text).toBe(202);
    const done = await waitForBackup(t, alice, nodeId, r.json.backupId);
    expect(done).toMatchObject({ status: 'FAILED', forExport: true, error: { code: 'wrong_password' } });
    // RLN checks a password only on a locked node: the backup locked it, and the service's unlock
    // with the wrong password could not open it again, as after any backup.
    expect(done.unlockError).toEqual(expect.stringContaining('could not be unlocked again'));
    const node = await nodeRecord(t, alice, nodeId);
    expect(node).toMatchObject({ status: 'RUNNING', locked: true });
    await unlock(t, alice, nodeId);
    const events = await t.server.db.query<{ event_type: string }>(`SELECT event_type FROM node_events WHERE node_id = $1`, [nodeId]);
    expect(events.map((e) => e.event_type)).toContain('NODE_BACKUP_FAILED');
    expect(events.map((e) => e.event_type)).not.toContain('NODE_EXPORTED');
  });

  it('exports a running, initialised, unlocked node: 202 with the record and the commands, then EXPORTED, locked, its daemon stopped', async () => {
    const r = await exportNode(alice, nodeId, { password: PASSWORD, confirm: 'leaving' });
    expect(r.status, r.text).toBe(202);
    expect(r.json).toMatchObject({ nodeId, origin: 'node', status: 'IN_PROGRESS', forExport: true, restoreHelp: 'docs/BACKUPS.md#taking-a-node-away' });
    expect(r.json.restoreCommands.join('\n')).toContain('/restore');
    expect(r.json.restoreCommands.join('\n')).toContain(`rln-node-${nodeId}-backup-${r.json.backupId}.rlnbackup`);
    exported = await waitForBackup(t, alice, nodeId, r.json.backupId);
    expect(exported).toMatchObject({ status: 'SUCCEEDED', forExport: true, downloadUrl: expect.any(String) });
    // Not unlocked again: the wallet left.
    expect(exported.unlockError).toBeUndefined();
    expect(await nodeRecord(t, alice, nodeId)).toMatchObject({ status: 'EXPORTED', locked: true });
    await expect.poll(async () => (await t.server.runtime.status(nodeId)).state, { timeout: 15_000 }).not.toBe('running');
    // The reconcile loop keeps it stopped: still down a few passes later (RECONCILE_INTERVAL_MS is 1 s here).
    await new Promise((res) => setTimeout(res, 2_500));
    expect((await t.server.runtime.status(nodeId)).state).not.toBe('running');
    // The other node runs on.
    expect((await nodeRecord(t, alice, otherId)).status).toBe('RUNNING');
    // In the owner's audit trail, without the password.
    const audit = await t.call('/api/audit-events', { token: alice.token });
    expect(audit.json.events.map((e: any) => e.action)).toContain('node.exported');
    expect(audit.text).not.toContain(PASSWORD);
  });

  it('announces NODE_EXPORTED to the webhook and on the event stream, after the backup completed', async () => {
    const all = await receiver.waitFor((got) => got.some((w) => w.json?.eventType === 'NODE_EXPORTED'));
    const event = all.find((w) => w.json?.eventType === 'NODE_EXPORTED')!;
    expect(event.json).toMatchObject({ nodeId, details: { nodeId, backupId: exported.backupId, sizeBytes: exported.sizeBytes, sha256: exported.sha256 } });
    const types = all.map((w) => w.json?.eventType);
    expect(types.indexOf('NODE_BACKUP_COMPLETED')).toBeLessThan(types.indexOf('NODE_EXPORTED'));
    expect(all.some((w) => w.json?.eventType === 'NODE_STATUS_UPDATED' && w.json.details.status === 'EXPORTED')).toBe(true);
    await expect.poll(() => stream.messages.some((m) => m.data.includes('"NODE_EXPORTED"') && m.data.includes(exported.backupId)), { timeout: 10_000 }).toBe(true);
  });

  it('takes no plan slot and accrues no time once exported', async () => {
    const r = await t.call('/api/account', { token: alice.token });
    expect(r.status).toBe(200);
    expect(r.json.usage.nodes).toMatchObject({ used: 1, running: 1 });
    // And no node time from now: its status changes are recorded as EXPORTED, which no bill counts.
    const [last] = await t.server.db.query<{ status: string }>('SELECT status FROM node_status_changes WHERE node_id = $1 ORDER BY changed_at DESC, id DESC LIMIT 1', [nodeId]);
    expect(last?.status).toBe('EXPORTED');
  });

  it('refuses to start, stop, upgrade, unlock, init, turn auto-unlock on or export it again; destroy is left', async () => {
    for (const action of ['start', 'stop', 'upgrade']) {
      const r = await t.call(`/api/nodes/${nodeId}/${action}`, { method: 'POST', token: alice.token });
      expect(r.status, `${action}: ${r.text}`).toBe(409);
      expect(r.json.error.code, action).toBe('node_exported');
    }
    const unlocking = await t.call(`/api/nodes/${nodeId}/unlock`, { method: 'POST', token: alice.token, body: { password: PASSWORD } });
    expect(unlocking.status, unlocking.text).toBe(409);
    expect(unlocking.json.error.code).toBe('node_exported');
    const init = await t.call(`/api/nodes/${nodeId}/init`, { method: 'POST', token: alice.token, body: { password: PASSWORD } });
    expect(init.json.error.code).toBe('node_exported');
    for (const route of ['unlock', 'init']) {
      const r = await gateway(alice, nodeId, route, { password: PASSWORD });
      expect(r.status, `${route}: ${JSON.stringify(r.json)}`).toBe(409);
      expect(JSON.stringify(r.json)).toContain('node_exported');
    }
    const auto = await t.call(`/api/nodes/${nodeId}/auto-unlock`, { method: 'PUT', token: alice.token, body: { password: PASSWORD } });
    expect(auto.status).toBe(409);
    expect(auto.json.error.code).toBe('node_exported');
    const again = await exportNode(alice, nodeId, { password: PASSWORD, confirm: 'leaving' });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('node_exported');
    expect((await t.server.runtime.status(nodeId)).state).not.toBe('running');
  });

  it('refuses to restore the exported wallet here, from its backup or from an upload of the file', async () => {
    const fromBackup = await t.call('/api/nodes', {
      method: 'POST',
      token: alice.token,
      body: { name: 'back-again', network: 'regtest', restore: { backupId: exported.backupId, password: PASSWORD, supersedeSource: true } },
    });
    expect(fromBackup.status, fromBackup.text).toBe(409);
    expect(fromBackup.json.error).toMatchObject({ code: 'wallet_exported', details: { sourceNodeId: nodeId } });

    const bytes = await download(exported.downloadUrl);
    const upload = await fetch(`${t.base}/api/backups/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(bytes),
    });
    const uploaded = (await upload.json()) as any;
    expect(upload.status, JSON.stringify(uploaded)).toBe(201);
    expect(uploaded.sourceNodeId).toBe(nodeId);
    const fromUpload = await t.call('/api/nodes', {
      method: 'POST',
      token: alice.token,
      body: { name: 'back-again', network: 'regtest', restore: { backupId: uploaded.backupId, password: PASSWORD, supersedeSource: true } },
    });
    expect(fromUpload.status, fromUpload.text).toBe(409);
    expect(fromUpload.json.error.code).toBe('wallet_exported');
  });

  it('the downloaded file restores into a fresh devnode outside the service, with the password: the same wallet', async () => {
    const bytes = await download(exported.downloadUrl);
    expect(sha256(bytes)).toBe(exported.sha256);
    // The commands the export answered, carried out by hand: the file beside a fresh node's storage.
    const storage = tempStorage();
    const folder = join(dirname(storage), 'client-backups');
    mkdirSync(folder, { recursive: true });
    const file = join(folder, `rln-node-${nodeId}-backup-${exported.backupId}.rlnbackup`);
    writeFileSync(file, bytes);
    const fresh = await startNode(storage);
    const restored = await fresh.call('POST', '/restore', { backup_path: file, password: PASSWORD });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    const unlocked = await fresh.call('POST', '/unlock', { password: PASSWORD });
    expect(unlocked.status, JSON.stringify(unlocked.body)).toBe(200);
    expect((await fresh.call('GET', '/nodeinfo')).body.pubkey).toBe(pubkey);
  });

  it('keeps the export backup past ordinary retention, while the node lives and once it is destroyed, until export retention ends', async () => {
    const { BackupJanitor } = await import('../../src/backups/janitor.ts');
    const { createLogger } = await import('../../src/logger.ts');
    const janitor = (retentionDays: number, exportRetentionDays: number) =>
      new BackupJanitor({
        db: t.server.db,
        blobs: t.server.services.backupBlobs,
        runtime: t.server.runtime,
        config: { backups: { ...t.config.backups, retentionDays, keepPerNode: 1, exportRetentionDays } },
        dataDir: t.config.dataDir,
        log: createLogger('silent'),
      });
    const ids = async () => (await t.server.db.query<{ id: string }>('SELECT id FROM backups WHERE node_id = $1', [nodeId])).map((b) => b.id);
    const in40Days = new Date(Date.now() + 40 * 24 * 3600_000);
    // Ordinary retention (1 day) 40 days on: the failed attempt goes, the export stays (60 days).
    await janitor(1, 60).sweep(in40Days);
    expect(await ids()).toEqual([exported.backupId]);

    const destroyed = await t.call('/api/nodes', { method: 'DELETE', token: alice.token, body: { destroyNodeId: nodeId } });
    expect(destroyed.status, destroyed.text).toBeLessThan(300);
    await t.waitForStatus(alice, nodeId, 'DESTROYED');
    await janitor(1, 60).sweep(in40Days);
    expect(await ids()).toEqual([exported.backupId]);
    // Past export retention it goes too.
    await janitor(1, 30).sweep(in40Days);
    expect(await ids()).toEqual([]);
  });
});
