// Backups through real HTTP against real devnode daemons, with the local blob store: an unlocked
// node is backed up and ends unlocked, a locked one stays locked, the file is the node's encrypted
// archive (checked by its hash and by not holding the mnemonic), downloads, paging, deletion,
// uploads, retention, the janitor, bad input and other users' attempts.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { insertNodeBackup, findBackup } from '../../src/db/backups.ts';
import { BackupJanitor } from '../../src/backups/janitor.ts';
import { createLogger } from '../../src/logger.ts';
import { backUp, download, initWallet, nodeRecord, PASSWORD, sha256, startBackup, unlock, waitForBackup } from './backup-helpers.ts';

const MAX_UPLOAD = 64 * 1024;

describe(`backups, local blob store, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nodeId: string;
  let emptyNodeId: string;
  let bobNodeId: string;
  let mnemonic: string;
  let firstBackup: any;

  const get = (path: string, user = alice) => t.call(path, { token: user.token });
  const storageFiles = (id: string) => readdirSync(join(t.config.dataDir, 'nodes', id, 'storage'));
  const janitor = (backups = t.config.backups) =>
    new BackupJanitor({ db: t.server.db, blobs: t.server.services.backupBlobs, runtime: t.server.runtime, config: { backups }, dataDir: t.config.dataDir, log: createLogger('silent') });

  beforeAll(async () => {
    t = await startTestServer({ BACKUP_UPLOAD_MAX_BYTES: String(MAX_UPLOAD) });
    ({ alice, bob } = await createTenants(t));
    [nodeId, emptyNodeId] = await createNodes(t, alice, [{ name: 'wallet' }, { name: 'no-wallet' }]);
    [bobNodeId] = await createNodes(t, bob, [{ name: 'bobs' }]);
    mnemonic = await initWallet(t, alice, nodeId);
    await unlock(t, alice, nodeId);
  });
  afterAll(() => t?.stop());

  it('backs up an unlocked node: 202 at once, SUCCEEDED with a download, and the node ends unlocked', async () => {
    const r = await startBackup(t, alice, nodeId);
    expect(r.status, r.text).toBe(202);
    expect(r.json).toMatchObject({ backupId: expect.stringMatching(/^[0-9a-f]{32}$/), nodeId, origin: 'node', status: 'IN_PROGRESS', imageVersion: 'devnode-0.1.0' });
    firstBackup = await waitForBackup(t, alice, nodeId, r.json.backupId);
    expect(firstBackup).toMatchObject({ status: 'SUCCEEDED', sizeBytes: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/), finishedAt: expect.any(String) });
    expect(firstBackup.unlockError).toBeUndefined();
    expect(firstBackup.downloadUrl).toMatch(`${t.base}/downloads/backups/`);
    const expiresIn = Date.parse(firstBackup.expiresAt) - Date.now();
    expect(expiresIn).toBeGreaterThan(29 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(30 * 60_000);

    expect((await nodeRecord(t, alice, nodeId)).locked).toBe(false);
    // The node's own answer, not only our record: it is really unlocked.
    expect((await get(`/api/nodes/${nodeId}/health`)).json.data.daemon).toMatchObject({ answering: true, httpStatus: 200 });

    const bytes = await download(firstBackup.downloadUrl);
    expect(bytes.length).toBe(firstBackup.sizeBytes);
    expect(sha256(bytes)).toBe(firstBackup.sha256);
    // The node encrypted it: neither the mnemonic nor the password are in it.
    expect(bytes.includes(Buffer.from(mnemonic.split(' ').slice(0, 3).join(' ')))).toBe(false);
    expect(bytes.includes(Buffer.from(PASSWORD))).toBe(false);
    // Nothing is left in the node's storage.
    expect(storageFiles(nodeId).filter((f) => f.startsWith('rln-cloud-backup-'))).toEqual([]);
  });

  it('records NODE_BACKUP_COMPLETED, and stores the password nowhere', async () => {
    const events = await t.server.db.query<{ payload: any }>(
      `SELECT payload FROM node_events WHERE node_id = $1 AND event_type = 'NODE_BACKUP_COMPLETED'`,
      [nodeId],
    );
    expect(events.map((e) => e.payload.details)).toContainEqual({ nodeId, backupId: firstBackup.backupId, sizeBytes: firstBackup.sizeBytes, sha256: firstBackup.sha256 });
    const everything = JSON.stringify([
      await t.server.db.query('SELECT * FROM backups'),
      await t.server.db.query('SELECT * FROM node_events'),
      await t.server.db.query('SELECT * FROM jobs'),
    ]);
    expect(everything).not.toContain(PASSWORD);
  });

  it('backs up a locked node and leaves it locked', async () => {
    // Locked through the node gateway, as a user does.
    const lock = await fetch(`${t.config.nodeApiUrl}/${alice.id}/${nodeId}/lock`, { method: 'POST', headers: { authorization: `Bearer ${alice.token}` } });
    expect(lock.status).toBe(200);
    expect((await nodeRecord(t, alice, nodeId)).locked).toBe(true);
    const done = await backUp(t, alice, nodeId);
    expect(done.status).toBe('SUCCEEDED');
    expect((await nodeRecord(t, alice, nodeId)).locked).toBe(true);
  });

  it('a wrong password on a locked node: FAILED wrong_password, the node as it was', async () => {
    const done = await backUp(t, alice, nodeId, 'not-the-password');
    expect(done).toMatchObject({ status: 'FAILED', error: { code: 'wrong_password', message: expect.stringContaining('refused the password') } });
    expect(done.unlockError).toBeUndefined();
    expect(done.downloadUrl).toBeUndefined();
    expect((await nodeRecord(t, alice, nodeId)).locked).toBe(true);
    const events = await t.server.db.query<{ payload: any }>(
      `SELECT payload FROM node_events WHERE node_id = $1 AND event_type = 'NODE_BACKUP_FAILED'`,
      [nodeId],
    );
    expect(events.map((e) => e.payload.details)).toContainEqual(expect.objectContaining({ backupId: done.backupId, code: 'wrong_password' }));
  });

  it('a wrong password on an unlocked node: FAILED, and the record says the node stayed locked', async () => {
    // RLN checks a password only on a locked node, so the backup had to lock it first.
    await unlock(t, alice, nodeId);
    const done = await backUp(t, alice, nodeId, 'not-the-password');
    expect(done).toMatchObject({ status: 'FAILED', error: { code: 'wrong_password' }, unlockError: expect.stringContaining('could not be unlocked again') });
    expect((await nodeRecord(t, alice, nodeId)).locked).toBe(true);
    await unlock(t, alice, nodeId);
  });

  it('with automatic unlock on, a node a wrong password left locked is unlocked by the service', async () => {
    const on = await t.call(`/api/nodes/${nodeId}/auto-unlock`, { method: 'PUT', token: alice.token, body: { password: PASSWORD } });
    expect(on.status, on.text).toBe(200);
    const done = await backUp(t, alice, nodeId, 'not-the-password');
    expect(done).toMatchObject({ status: 'FAILED', error: { code: 'wrong_password' }, unlockError: expect.any(String) });
    await expect.poll(async () => (await nodeRecord(t, alice, nodeId)).locked, { timeout: 15_000 }).toBe(false);
    expect((await t.call(`/api/nodes/${nodeId}/auto-unlock`, { method: 'DELETE', token: alice.token })).status).toBe(200);
  });

  it('refuses a backup while one runs, of a node without a wallet, of a stopped node and of a destroyed one', async () => {
    const running = await insertNodeBackup(t.server.db, {
      id: 'e'.repeat(32), userId: alice.id, nodeId, network: 'regtest', imageVersion: 'devnode-0.1.0', wasUnlocked: false, runner: 'elsewhere',
    });
    const second = await startBackup(t, alice, nodeId);
    expect(second.status).toBe(409);
    expect(second.json.error).toMatchObject({ code: 'backup_in_progress', details: { backupId: running.id } });
    const deleting = await t.call(`/api/nodes/${nodeId}/backups/${running.id}`, { method: 'DELETE', token: alice.token });
    expect(deleting.status).toBe(409);
    await t.server.db.query('DELETE FROM backups WHERE id = $1', [running.id]);

    const empty = await startBackup(t, alice, emptyNodeId);
    expect(empty.status).toBe(409);
    expect(empty.json.error.code).toBe('node_not_initialized');

    expect((await t.call(`/api/nodes/${emptyNodeId}/stop`, { method: 'POST', token: alice.token })).status).toBe(200);
    await t.waitForStatus(alice, emptyNodeId, 'PAUSED');
    const paused = await startBackup(t, alice, emptyNodeId);
    expect(paused.status).toBe(409);
    expect(paused.json.error).toMatchObject({ code: 'node_not_running', message: expect.stringContaining('PAUSED') });
  });

  it('refuses a body without a password, with other fields, or that is not JSON, never echoing it', async () => {
    for (const body of [{}, { password: '' }, { password: PASSWORD, extra: 1 }, `{"password": "${PASSWORD}"`]) {
      const r = await t.call(`/api/nodes/${nodeId}/backups`, { method: 'POST', token: alice.token, body });
      expect(r.status, r.text).toBe(400);
      expect(r.text).not.toContain(PASSWORD);
    }
  });

  it('lists newest first, in pages', async () => {
    const all = await get(`/api/nodes/${nodeId}/backups`);
    expect(all.status).toBe(200);
    expect(all.json.nextCursor).toBeNull();
    expect(all.json.backups.length).toBe(5);
    expect(all.json.backups.at(-1).backupId).toBe(firstBackup.backupId);
    expect(all.json.backups[0].downloadUrl).toBeUndefined();
    const ids: string[] = [];
    let cursor: string | null | undefined;
    do {
      const page = await get(`/api/nodes/${nodeId}/backups?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      ids.push(...page.json.backups.map((b: any) => b.backupId));
      cursor = page.json.nextCursor;
    } while (cursor);
    expect(ids).toEqual(all.json.backups.map((b: any) => b.backupId));
  });

  it('refuses a bad page size or a cursor it did not give for this node', async () => {
    for (const q of ['limit=0', 'limit=201', 'limit=x', 'cursor=%21%21', `cursor=${Buffer.from(`backup:${'f'.repeat(32)}`).toString('base64url')}`]) {
      const r = await get(`/api/nodes/${nodeId}/backups?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.json.error.code).toBe('invalid_request');
    }
    // A cursor of this user's other node is not one of this list's.
    const page = await get(`/api/nodes/${nodeId}/backups?limit=1`);
    const other = await get(`/api/nodes/${emptyNodeId}/backups?cursor=${page.json.nextCursor}`);
    expect(other.status).toBe(400);
  });

  it("keeps other users out: another user's node or backup answers 404, whatever the route", async () => {
    const paths = [`/api/nodes/${nodeId}/backups`, `/api/nodes/${nodeId}/backups/${firstBackup.backupId}`];
    for (const path of paths) {
      const r = await get(path, bob);
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('node_not_found');
    }
    expect((await startBackup(t, bob, nodeId)).status).toBe(404);
    expect((await t.call(`/api/nodes/${nodeId}/backups/${firstBackup.backupId}`, { method: 'DELETE', token: bob.token })).status).toBe(404);
    // Alice's backup through Bob's own node.
    const viaOwn = await get(`/api/nodes/${bobNodeId}/backups/${firstBackup.backupId}`, bob);
    expect(viaOwn.status).toBe(404);
    expect(viaOwn.json.error.code).toBe('backup_not_found');
    // Alice's backup through her other node.
    expect((await get(`/api/nodes/${emptyNodeId}/backups/${firstBackup.backupId}`)).json.error.code).toBe('backup_not_found');
  });

  it('refuses a tampered or expired download URL', async () => {
    const url = new URL(firstBackup.downloadUrl);
    const tampered = new URL(url);
    tampered.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 60));
    expect((await fetch(tampered)).status).toBe(403);
    // The same signature on another path (the exports area) is not valid there.
    const moved = new URL(url);
    moved.pathname = url.pathname.replace('/downloads/backups/', '/downloads/');
    expect((await fetch(moved)).status).toBe(403);
  });

  it('takes an upload to restore from, refusing one too large, empty or of another type', async () => {
    const bytes = new Uint8Array(await download(firstBackup.downloadUrl));
    const upload = (body: BodyInit, headers: Record<string, string> = { 'content-type': 'application/octet-stream' }) =>
      fetch(`${t.base}/api/backups/uploads`, { method: 'POST', headers: { authorization: `Bearer ${alice.token}`, ...headers }, body, duplex: 'half' } as RequestInit);
    const ok = await upload(bytes);
    expect(ok.status).toBe(201);
    // One of alice's own backups: recognised by its hash, so of its network and tied to its node.
    expect(await ok.json()).toMatchObject({ origin: 'upload', nodeId: null, network: 'regtest', sourceNodeId: nodeId, status: 'SUCCEEDED', sizeBytes: bytes.length, sha256: sha256(Buffer.from(bytes)) });

    const tooLarge = await upload(new Uint8Array(MAX_UPLOAD + 1));
    expect(tooLarge.status).toBe(413);
    // Streamed without a length: refused once the count passes the limit, nothing recorded.
    const before = (await t.server.db.query(`SELECT id FROM backups WHERE origin = 'upload'`)).length;
    const streamed = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new Uint8Array(MAX_UPLOAD / 2));
        controller.close();
      },
    });
    expect((await upload(streamed)).status).toBe(413);
    expect((await t.server.db.query(`SELECT id FROM backups WHERE origin = 'upload'`)).length).toBe(before);
    expect((await upload(new Uint8Array(0))).status).toBe(400);
    expect((await upload(bytes, { 'content-type': 'application/json' })).status).toBe(415);
    expect(readdirSync(join(t.config.dataDir, 'backups', 'staging'))).toEqual([]);
  });

  it('deletes a backup and its file', async () => {
    const done = await backUp(t, alice, nodeId);
    const r = await t.call(`/api/nodes/${nodeId}/backups/${done.backupId}`, { method: 'DELETE', token: alice.token });
    expect(r.status).toBe(204);
    expect((await get(`/api/nodes/${nodeId}/backups/${done.backupId}`)).status).toBe(404);
    expect((await fetch(done.downloadUrl)).status).toBe(404);
    expect((await t.call(`/api/nodes/${nodeId}/backups/${done.backupId}`, { method: 'DELETE', token: alice.token })).status).toBe(404);
  });

  it('the janitor fails a backup whose replica went silent, with its event', async () => {
    const silent = await insertNodeBackup(t.server.db, {
      id: 'd'.repeat(32), userId: alice.id, nodeId, network: 'regtest', imageVersion: 'devnode-0.1.0', wasUnlocked: false, runner: 'gone',
    });
    await t.server.db.query(`UPDATE backups SET heartbeat_at = now() - interval '1 minute' WHERE id = $1`, [silent.id]);
    expect((await janitor().sweep()).interrupted).toBeGreaterThanOrEqual(1);
    expect(await findBackup(t.server.db, silent.id)).toMatchObject({ status: 'FAILED', error_code: 'backup_interrupted' });
    const events = await t.server.db.query<{ payload: any }>(
      `SELECT payload FROM node_events WHERE node_id = $1 AND event_type = 'NODE_BACKUP_FAILED'`,
      [nodeId],
    );
    expect(events.map((e) => e.payload.details)).toContainEqual(expect.objectContaining({ backupId: silent.id, code: 'backup_interrupted' }));
  });

  it('retention keeps BACKUP_RETENTION_COUNT per node, and never the newest of a live node past BACKUP_RETENTION_DAYS', async () => {
    const succeeded = async () =>
      (await t.server.db.query<{ id: string }>(`SELECT id FROM backups WHERE node_id = $1 AND status = 'SUCCEEDED' ORDER BY created_at DESC`, [nodeId])).map((r) => r.id);
    const before = await succeeded();
    expect(before.length).toBeGreaterThanOrEqual(2);
    await janitor({ ...t.config.backups, keepPerNode: 1 }).sweep();
    expect(await succeeded()).toEqual([before[0]]);
    // Everything older than the retention: only that newest one stays.
    await t.server.db.query(`UPDATE backups SET created_at = now() - interval '400 days'`);
    await janitor().sweep();
    const left = await t.server.db.query<{ id: string; origin: string }>('SELECT id, origin FROM backups');
    expect(left).toEqual([{ id: before[0], origin: 'node' }]);
    expect((await get(`/api/nodes/${nodeId}/backups/${before[0]}`)).json.status).toBe('SUCCEEDED');
  });
});
