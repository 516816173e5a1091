// Uploaded backups as their owner manages them: listed and deleted, capped per user in count and
// bytes (409 backup_quota_exceeded, nothing stored), and of a known network: the network of the
// node backup a file is recognised as, or the one declared; a restore into another network is a
// 400 as for node backups. Another user's uploads are neither listed nor deletable.
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createTenants } from '../helpers/tenants.ts';

const QUOTA_BYTES = 3000;
const QUOTA_COUNT = 3;

describe(`uploaded backups, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  const upload = (user: TestUser, bytes: number, query = '?network=regtest') =>
    fetch(`${t.base}/api/backups/uploads${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(bytes).fill(7),
    });
  const list = (user: TestUser, query = '') => t.call(`/api/backups/uploads${query}`, { token: user.token });
  const remove = (user: TestUser, id: string) => t.call(`/api/backups/uploads/${id}`, { method: 'DELETE', token: user.token });
  const stored = async (user: TestUser) => (await t.server.db.query(`SELECT id FROM backups WHERE user_id = $1 AND origin = 'upload'`, [user.id])).length;

  beforeAll(async () => {
    t = await startTestServer({ BACKUP_UPLOAD_MAX_BYTES: '2048', BACKUP_UPLOAD_QUOTA_BYTES: String(QUOTA_BYTES), BACKUP_UPLOAD_QUOTA_COUNT: String(QUOTA_COUNT) });
    ({ alice, bob } = await createTenants(t));
  });
  afterAll(() => t?.stop());

  it('records the declared network, and refuses a file of unknown network without one', async () => {
    const r = await upload(alice, 100, '?network=testnet');
    expect(r.status).toBe(201);
    const body = (await r.json()) as any;
    expect(body).toMatchObject({ origin: 'upload', network: 'testnet', sourceNodeId: null });
    const undeclared = await upload(alice, 100, '');
    expect(undeclared.status).toBe(400);
    expect(((await undeclared.json()) as any).error.message).toContain('network');
    expect((await upload(alice, 100, '?network=mainnet')).status).toBe(400);
    expect(await stored(alice)).toBe(1);
    // Restored only into its network.
    const wrong = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'x', network: 'regtest', restore: { backupId: body.backupId, password: 'p4ssword' } } });
    expect(wrong.status, wrong.text).toBe(400);
    expect(wrong.json.error.message).toContain('testnet');
    await remove(alice, body.backupId);
  });

  it('lists the owner\'s uploads, newest first, in pages; never another user\'s', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((((await (await upload(alice, 10 + i)).json()) as any).backupId));
    const all = await list(alice);
    expect(all.status).toBe(200);
    expect(all.json.uploads.map((u: any) => u.backupId)).toEqual([...ids].reverse());
    expect(all.json.nextCursor).toBeNull();
    const first = await list(alice, '?limit=2');
    expect(first.json.uploads).toHaveLength(2);
    const second = await list(alice, `?limit=2&cursor=${first.json.nextCursor}`);
    expect(second.json.uploads.map((u: any) => u.backupId)).toEqual([ids[0]]);
    expect((await list(bob)).json).toEqual({ uploads: [], nextCursor: null });
    // Bad input.
    expect((await list(alice, '?limit=0')).status).toBe(400);
    expect((await list(alice, '?cursor=nonsense')).status).toBe(400);
    for (const id of ids) expect((await remove(alice, id)).status).toBe(204);
  });

  it('deletes an upload and its file; another user\'s or a missing one is 404, a bad id 400', async () => {
    const { backupId } = (await (await upload(alice, 50)).json()) as any;
    const foreign = await remove(bob, backupId);
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe('backup_not_found');
    expect(await stored(alice)).toBe(1);
    expect((await remove(alice, 'x')).status).toBe(400);
    expect((await remove(alice, backupId)).status).toBe(204);
    expect((await remove(alice, backupId)).status).toBe(404);
    expect(await stored(alice)).toBe(0);
    const blobs = join(t.config.dataDir, 'backups');
    expect(readdirSync(blobs, { recursive: true }).filter((f) => String(f).includes(backupId))).toEqual([]);
  });

  it('caps what one user keeps: past the count or the bytes, 409 backup_quota_exceeded and nothing stored', async () => {
    const ids: string[] = [];
    for (let i = 0; i < QUOTA_COUNT; i++) {
      const r = await upload(alice, 100);
      expect(r.status).toBe(201);
      ids.push(((await r.json()) as any).backupId);
    }
    const overCount = await upload(alice, 100);
    expect(overCount.status).toBe(409);
    expect(((await overCount.json()) as any).error).toMatchObject({ code: 'backup_quota_exceeded', details: { quotaCount: QUOTA_COUNT, usedCount: QUOTA_COUNT } });
    // Another user has a quota of their own.
    expect((await upload(bob, 100)).status).toBe(201);
    await remove(alice, ids.pop()!);
    // 200 bytes kept: 2000 more fit under BACKUP_UPLOAD_MAX_BYTES but not under the 3000-byte quota...
    await remove(alice, ids.pop()!);
    expect((await upload(alice, 2000)).status).toBe(201);
    const overBytes = await upload(alice, 1000);
    expect(overBytes.status).toBe(409);
    expect(((await overBytes.json()) as any).error.code).toBe('backup_quota_exceeded');
    // ...also when the client does not say how large the file is: stopped once the count passes it.
    const streamed = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new Uint8Array(300));
        controller.close();
      },
    });
    const chunked = await fetch(`${t.base}/api/backups/uploads?network=regtest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/octet-stream' },
      body: streamed,
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(409);
    expect(await stored(alice)).toBe(2);
    expect(readdirSync(join(t.config.dataDir, 'backups', 'staging'))).toEqual([]);
  });

  it('leaves nothing staged when the client sends less than it said and aborts (issue #37)', async () => {
    const staging = join(t.config.dataDir, 'backups', 'staging');
    const before = await stored(bob);
    const { hostname, port } = new URL(t.base);
    const socket = net.connect({ host: hostname, port: Number(port) });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/backups/uploads?network=regtest HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${bob.token}\r\n` +
        'content-type: application/octet-stream\r\ncontent-length: 2000\r\n\r\n',
    );
    socket.write(new Uint8Array(700).fill(7));
    // The first bytes are staged...
    await expect.poll(() => readdirSync(staging).length, { timeout: 10_000 }).toBe(1);
    // ...and gone once the client aborts mid-body (a reset): nothing staged outlives its request.
    socket.resetAndDestroy();
    await expect.poll(() => readdirSync(staging), { timeout: 10_000 }).toEqual([]).catch((e) => { require('node:fs').writeFileSync('/tmp/limits-debug.txt', 'left: ' + readdirSync(staging).join(',') + ' ' + Date.now() + '\n', { flag: 'a' }); throw e; });
    expect(await stored(bob)).toBe(before);
  });

  it('needs a token', async () => {
    expect((await t.call('/api/backups/uploads')).status).toBe(401);
    expect((await t.call(`/api/backups/uploads/${'0'.repeat(32)}`, { method: 'DELETE' })).status).toBe(401);
  });
});
