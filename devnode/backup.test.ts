// End-to-end tests of POST /backup and /restore against the real devnode process: one node's
// backup restored into a fresh node on another storage directory, and every way both refuse.
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanUpDevnodes, startNode, stopNode, tempStorage, type DevnodeProcess } from './process-for-tests.ts';

afterAll(cleanUpDevnodes);

const PASSWORD = 'backup password';
const NOT_INITIALIZED = { status: 403, body: { error: 'Wallet has not been initialized (hint: call init)', code: 403, name: 'NotInitialized' } };
const WRONG_PASSWORD = { status: 401, body: { error: 'The provided password is incorrect', code: 401, name: 'WrongPassword' } };

const stagingLeft = (storage: string) => readdirSync(storage).filter((name) => name.startsWith('.devnode-restore-'));

describe('devnode backup and restore', () => {
  const storageA = tempStorage();
  const storageB = tempStorage();
  const backupA = join(storageA, 'rln-cloud-backup-1');
  const backupB = join(storageB, 'rln-cloud-backup-1');
  const blob = randomBytes(1024 * 1024);
  let original: DevnodeProcess;
  let fresh: DevnodeProcess;
  let mnemonic: string;
  let pubkey: string;
  let firstAddress: string;

  it('refuses a backup before init (403 NotInitialized) and while unlocked (403 UnlockedNode)', async () => {
    original = await startNode(storageA);
    expect(await original.call('POST', '/backup', { backup_path: backupA, password: PASSWORD })).toEqual(NOT_INITIALIZED);
    mnemonic = (await original.call('POST', '/init', { password: PASSWORD })).body.mnemonic;
    expect((await original.call('POST', '/unlock', { password: PASSWORD })).status).toBe(200);
    pubkey = (await original.call('GET', '/nodeinfo')).body.pubkey;
    firstAddress = (await original.call('POST', '/address', {})).body.address;
    expect(await original.call('POST', '/backup', { backup_path: backupA, password: PASSWORD })).toEqual({
      status: 403, body: { error: 'Node is unlocked (hint: call lock)', code: 403, name: 'UnlockedNode' },
    });
    expect((await original.call('POST', '/lock')).status).toBe(200);
  });

  it('refuses a wrong password (401) and a missing directory (400), writing nothing', async () => {
    const before = readdirSync(storageA);
    expect(await original.call('POST', '/backup', { backup_path: backupA, password: 'not the password' })).toEqual(WRONG_PASSWORD);
    const missingDir = await original.call('POST', '/backup', { backup_path: join(storageA, 'no-such-dir', 'rln-cloud-backup-1'), password: PASSWORD });
    expect(missingDir).toMatchObject({ status: 400, body: { code: 400, name: 'InvalidRequest' } });
    expect(missingDir.body.error).toContain('does not exist');
    expect((await original.call('POST', '/backup', { password: PASSWORD })).body.error).toContain('missing field `backup_path`');
    expect(readdirSync(storageA)).toEqual(before);
  });

  it('writes one encrypted file holding the whole storage, and never overwrites a file', async () => {
    mkdirSync(join(storageA, 'extra', 'nested'), { recursive: true });
    writeFileSync(join(storageA, 'extra', 'nested', 'blob.bin'), blob);
    writeFileSync(join(storageA, 'empty.dat'), '');
    mkdirSync(join(storageA, 'empty-dir'));
    // Not the node's data: an older backup and a half-written upload stay out of the archive.
    writeFileSync(join(storageA, 'rln-cloud-backup-0'), 'an older backup');
    writeFileSync(join(storageA, 'upload.partial'), 'half an upload');

    expect(await original.call('POST', '/backup', { backup_path: backupA, password: PASSWORD })).toEqual({ status: 200, body: {} });
    const bytes = readFileSync(backupA);
    expect(bytes.subarray(0, 8).toString()).toBe('DNBACKUP');
    expect(bytes.length).toBeGreaterThan(blob.length);
    const state = JSON.parse(readFileSync(join(storageA, 'devnode-state.json'), 'utf8'));
    for (const clear of [mnemonic, PASSWORD, state.passwordHash, 'devnode-state.json', 'blob.bin', blob.subarray(0, 32), blob.subarray(-32)]) {
      expect(bytes.includes(clear)).toBe(false);
    }
    expect(statSync(backupA).mode & 0o777).toBe(0o600);
    // The temporary file is gone: only the backup itself was added.
    expect(readdirSync(storageA).sort()).toEqual(
      ['devnode-kv', 'devnode-state.json', 'empty-dir', 'empty.dat', 'extra', 'rln-cloud-backup-0', 'rln-cloud-backup-1', 'upload.partial'],
    );

    expect(await original.call('POST', '/backup', { backup_path: backupA, password: PASSWORD })).toEqual({
      status: 400, body: { error: 'Invalid backup path', code: 400, name: 'InvalidBackupPath' },
    });
    expect(readFileSync(backupA).equals(bytes)).toBe(true);
  });

  it('refuses a restore on an initialized node (403 AlreadyInitialized)', async () => {
    expect(await original.call('POST', '/restore', { backup_path: backupA, password: PASSWORD })).toEqual({
      status: 403, body: { error: 'Node has already been initialized', code: 403, name: 'AlreadyInitialized' },
    });
  });

  it('refuses a missing file (400) and a wrong password (401); the fresh node stays uninitialized', async () => {
    fresh = await startNode(storageB);
    const missing = await fresh.call('POST', '/restore', { backup_path: backupB, password: PASSWORD });
    expect(missing).toMatchObject({ status: 400, body: { code: 400, name: 'InvalidRequest' } });
    expect(missing.body.error).toBe(`backup file not found: ${backupB}`);
    // As the service does: the backup file goes into the new node's storage.
    copyFileSync(backupA, backupB);
    expect(await fresh.call('POST', '/restore', { backup_path: backupB, password: 'not the password' })).toEqual(WRONG_PASSWORD);
    expect(await fresh.call('POST', '/unlock', { password: PASSWORD })).toEqual(NOT_INITIALIZED);
    expect(readdirSync(storageB).sort()).toEqual(['rln-cloud-backup-1']);
  });

  it('refuses truncated and damaged files (400), leaving nothing restored and no staging directory', async () => {
    const good = readFileSync(backupB);
    const flipped = (offset: number) => {
      const copy = Buffer.from(good);
      copy[offset]! ^= 0x01;
      return copy;
    };
    const damaged: Array<[string, Buffer]> = [
      ['cut by one byte', good.subarray(0, good.length - 1)],
      ['cut in half', good.subarray(0, good.length >> 1)],
      ['cut inside the header', good.subarray(0, 40)],
      ['a flipped byte in the middle', flipped(good.length >> 1)],
      ['a flipped byte in the tag', flipped(good.length - 1)],
      ['a flipped byte in the salt', flipped(20)],
      ['not a backup at all', Buffer.from('hello, I am not a backup\n')],
    ];
    const bad = join(storageB, 'rln-cloud-backup-bad');
    for (const [what, bytes] of damaged) {
      writeFileSync(bad, bytes);
      const res = await fresh.call('POST', '/restore', { backup_path: bad, password: PASSWORD });
      expect({ what, status: res.status, name: res.body.name }).toEqual({ what, status: 400, name: 'InvalidRequest' });
      expect(res.body.error).toMatch(/^backup file is corrupt or truncated/);
      expect(stagingLeft(storageB)).toEqual([]);
      expect(readdirSync(storageB).sort()).toEqual(['rln-cloud-backup-1', 'rln-cloud-backup-bad']);
    }
    expect(await fresh.call('POST', '/unlock', { password: PASSWORD })).toEqual(NOT_INITIALIZED);
  });

  it('restores into the fresh node: same wallet, same files, locked until unlocked', async () => {
    expect(await fresh.call('POST', '/restore', { backup_path: backupB, password: PASSWORD })).toEqual({ status: 200, body: {} });
    expect(existsSync(backupB)).toBe(true);
    expect(stagingLeft(storageB)).toEqual([]);
    expect((await fresh.call('GET', '/nodeinfo')).body.name).toBe('LockedNode');
    expect((await fresh.call('POST', '/init', { password: PASSWORD })).body.name).toBe('AlreadyInitialized');
    expect((await fresh.call('POST', '/restore', { backup_path: backupB, password: PASSWORD })).body.name).toBe('AlreadyInitialized');
    expect(await fresh.call('POST', '/unlock', { password: 'not the password' })).toEqual(WRONG_PASSWORD);
    expect(await fresh.call('POST', '/unlock', { password: PASSWORD })).toEqual({ status: 200, body: {} });
    expect((await fresh.call('GET', '/nodeinfo')).body.pubkey).toBe(pubkey);
    // The address index is node state (devnode-kv) and came with the backup: the first address is not handed out again.
    const next = (await fresh.call('POST', '/address', {})).body.address;
    expect(next).toMatch(/^bcrt1q/);
    expect(next).not.toBe(firstAddress);

    expect(readFileSync(join(storageB, 'extra', 'nested', 'blob.bin')).equals(blob)).toBe(true);
    expect(readFileSync(join(storageB, 'devnode-state.json')).equals(readFileSync(join(storageA, 'devnode-state.json')))).toBe(true);
    expect(statSync(join(storageB, 'empty.dat')).size).toBe(0);
    expect(statSync(join(storageB, 'empty-dir')).isDirectory()).toBe(true);
    expect(readdirSync(storageB).sort()).toEqual(
      ['devnode-kv', 'devnode-state.json', 'empty-dir', 'empty.dat', 'extra', 'rln-cloud-backup-1', 'rln-cloud-backup-bad'],
    );
  });

  it('keeps the restored wallet across a restart', async () => {
    expect(await stopNode(fresh)).toEqual({ code: 0, signal: null });
    fresh = await startNode(storageB);
    expect(fresh.stdout()).toContain('wallet initialized, locked');
    expect((await fresh.call('POST', '/unlock', { password: PASSWORD })).status).toBe(200);
    expect((await fresh.call('GET', '/nodeinfo')).body.pubkey).toBe(pubkey);
    for (const secret of [PASSWORD, mnemonic]) {
      expect(original.stdout()).not.toContain(secret);
    }
    await Promise.all([stopNode(original), stopNode(fresh)]);
  });
});
