// In-process tests of backup and restore: the state guard, and archives that are intact (their GCM
// tag verifies) but must still be refused. The end-to-end path is in backup.test.ts.
import { createCipheriv } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeEntryHeader, END_OF_ARCHIVE } from './backup-archive.ts';
import { CIPHER, DEFAULT_COST, deriveBackupKeys, encodeHeader, newHeaderSecrets } from './backup-format.ts';
import { RlnError } from './errors.ts';
import { createLogger } from './log.ts';
import { StateFile } from './state.ts';
import { Wallet } from './wallet.ts';

const PASSWORD = 'backup password';
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function storage(): string {
  const dir = mkdtempSync(join(tmpdir(), 'devnode-backup-'));
  dirs.push(dir);
  return join(dir, 'storage');
}

const log = createLogger(() => undefined);
const wallet = (dir: string) => new Wallet(StateFile.open(dir), log);
const refusal = (p: Promise<unknown>) =>
  p.then(() => 'ok', (e: unknown) => (e instanceof RlnError ? `${e.rlnName}: ${e.message}` : String(e)));

/** A backup file with a valid header and tag around whatever archive bytes the test wants. */
async function craftBackup(path: string, archive: Buffer[]): Promise<void> {
  const { salt, iv } = newHeaderSecrets();
  const { passwordCheck, key } = await deriveBackupKeys(PASSWORD, salt, DEFAULT_COST);
  const header = encodeHeader({ cost: DEFAULT_COST, salt, iv, passwordCheck });
  const cipher = createCipheriv(CIPHER, key, iv);
  cipher.setAAD(header);
  writeFileSync(path, Buffer.concat([header, cipher.update(Buffer.concat(archive)), cipher.final(), cipher.getAuthTag()]));
}

const fileEntry = (path: string, content: string | Buffer) => {
  const bytes = Buffer.from(content);
  return [encodeEntryHeader({ kind: 'file', path, mode: 0o600, size: bytes.length }), bytes];
};

async function initializedStateFile(password: string): Promise<Buffer> {
  const dir = storage();
  await wallet(dir).init(password, undefined);
  return readFileSync(join(dir, 'devnode-state.json'));
}

describe('backup and restore in-process', () => {
  it('answers ChangingState to requests that arrive while a backup or a restore runs', async () => {
    const source = storage();
    const a = wallet(source);
    await a.init(PASSWORD, undefined);
    const backupPath = join(source, 'rln-cloud-backup-1');
    const backup = a.backup(backupPath, PASSWORD);
    expect(await refusal(a.unlock(PASSWORD))).toMatch(/^ChangingState/);
    expect(await refusal(a.changePassword(PASSWORD, 'new password'))).toMatch(/^ChangingState/);
    expect(() => a.requireNotChangingState()).toThrow(RlnError);
    await backup;

    const target = storage();
    const b = wallet(target);
    copyFileSync(backupPath, join(target, 'rln-cloud-backup-1'));
    const restore = b.restore(join(target, 'rln-cloud-backup-1'), PASSWORD);
    expect(await refusal(b.init(PASSWORD, undefined))).toMatch(/^ChangingState/);
    await restore;
    expect(b.initialized).toBe(true);
    expect(b.unlocked).toBe(false);
  });

  it('excludes a backup_path with any name from its own archive', async () => {
    const source = storage();
    await wallet(source).init(PASSWORD, undefined);
    const backupPath = join(source, 'my-backup');
    await wallet(source).backup(backupPath, PASSWORD);
    const target = storage();
    const b = wallet(target);
    copyFileSync(backupPath, join(target, 'my-backup'));
    await b.restore(join(target, 'my-backup'), PASSWORD);
    expect(readdirSync(target).sort()).toEqual(['devnode-state.json', 'my-backup']);
  });

  it('keeps backup files inside the storage directory: devnode runs on the host', async () => {
    const dir = storage();
    const node = wallet(dir);
    await node.init(PASSWORD, undefined);
    const outside = join(dirname(dir), 'rln-cloud-backup-1');
    symlinkSync(dirname(dir), join(dir, 'link'));
    for (const path of [outside, join(dir, 'link', 'rln-cloud-backup-1')]) {
      expect(await refusal(node.backup(path, PASSWORD))).toBe(
        `InvalidRequest: backup_path must be inside the node's storage directory ${realpathSync(dir)} or in ${join(dirname(realpathSync(dir)), 'client-backups')}`,
      );
    }
    expect(existsSync(outside)).toBe(false);
    writeFileSync(outside, 'anything');
    expect(await refusal(wallet(storage()).restore(outside, PASSWORD))).toMatch(/^InvalidRequest: backup_path must be inside/);
  });

  it("writes and reads a backup in the client backups folder beside its storage, and leaves it out of its archive's reach", async () => {
    const dir = storage();
    const node = wallet(dir);
    await node.init(PASSWORD, undefined);
    const kept = join(dirname(dir), 'client-backups');
    mkdirSync(kept);
    await node.backup(join(kept, 'rln-cloud-backup-user-a'), PASSWORD);
    expect(readdirSync(kept)).toEqual(['rln-cloud-backup-user-a']);
    const target = storage();
    mkdirSync(join(dirname(target), 'client-backups'), { recursive: true });
    copyFileSync(join(kept, 'rln-cloud-backup-user-a'), join(dirname(target), 'client-backups', 'rln-cloud-backup-user-a'));
    await wallet(target).restore(join(dirname(target), 'client-backups', 'rln-cloud-backup-user-a'), PASSWORD);
    expect(readdirSync(target)).toContain('devnode-state.json');
  });

  it('answers UnsupportedBackupVersion for another format version', async () => {
    const source = storage();
    await wallet(source).init(PASSWORD, undefined);
    const backupPath = join(source, 'rln-cloud-backup-1');
    await wallet(source).backup(backupPath, PASSWORD);
    const bytes = readFileSync(backupPath);
    bytes[8] = 2;
    writeFileSync(backupPath, bytes);
    const target = storage();
    mkdirSync(target);
    copyFileSync(backupPath, join(target, 'rln-cloud-backup-1'));
    expect(await refusal(wallet(target).restore(join(target, 'rln-cloud-backup-1'), PASSWORD))).toBe(
      'UnsupportedBackupVersion: The provided backup has an unsupported version: 2',
    );
  });

  it.each([
    ['a path leading out of the storage', [...fileEntry('../escaped', 'x'), END_OF_ARCHIVE], /unsafe path/],
    ['an absolute path', [...fileEntry('/tmp/escaped', 'x'), END_OF_ARCHIVE], /unsafe path/],
    ['no end marker', fileEntry('notes.txt', 'x'), /ends early/],
    ['a file cut short', [fileEntry('notes.txt', 'abcdef')[0]!, Buffer.from('abc')], /ends early/],
    ['bytes after the end marker', [END_OF_ARCHIVE, Buffer.from('x')], /after the end/],
    ['the same path twice', [...fileEntry('a', 'x'), ...fileEntry('a', 'y'), END_OF_ARCHIVE], /clashes/],
    ['no wallet state', [...fileEntry('notes.txt', 'x'), END_OF_ARCHIVE], /no initialized wallet/],
    ['a damaged wallet state', [...fileEntry('devnode-state.json', '{"version":1}'), END_OF_ARCHIVE], /wallet state .* damaged/],
  ])('refuses an intact archive with %s, restoring nothing', async (_what, archive, reason) => {
    const dir = storage();
    const node = wallet(dir);
    const backupPath = join(dir, 'rln-cloud-backup-1');
    await craftBackup(backupPath, archive);
    const answer = await refusal(node.restore(backupPath, PASSWORD));
    expect(answer).toMatch(/^InvalidRequest: backup file is corrupt or truncated: /);
    expect(answer).toMatch(reason);
    expect(readdirSync(dir)).toEqual(['rln-cloud-backup-1']);
    expect(existsSync(join(dirname(dir), 'escaped'))).toBe(false);
    expect(node.initialized).toBe(false);
  });

  it("refuses, as RLN does, a backup whose wallet does not open with the backup's password", async () => {
    const dir = storage();
    const backupPath = join(dir, 'rln-cloud-backup-1');
    mkdirSync(dir);
    await craftBackup(backupPath, [...fileEntry('devnode-state.json', await initializedStateFile('another password')), END_OF_ARCHIVE]);
    const node = wallet(dir);
    expect(await refusal(node.restore(backupPath, PASSWORD))).toBe('WrongPassword: The provided password is incorrect');
    expect(readdirSync(dir)).toEqual(['rln-cloud-backup-1']);
    expect(node.initialized).toBe(false);
  });

  it('moves aside what held a restored name, and keeps files the backup does not have', async () => {
    const source = storage();
    await wallet(source).init(PASSWORD, undefined);
    mkdirSync(join(source, 'data'));
    writeFileSync(join(source, 'data', 'channel.db'), 'from the backup');
    const backupPath = join(source, 'rln-cloud-backup-1');
    await wallet(source).backup(backupPath, PASSWORD);

    const target = storage();
    mkdirSync(join(target, 'data'), { recursive: true });
    writeFileSync(join(target, 'data', 'stale.db'), 'left over');
    writeFileSync(join(target, 'unrelated.txt'), 'kept');
    copyFileSync(backupPath, join(target, 'rln-cloud-backup-1'));
    await wallet(target).restore(join(target, 'rln-cloud-backup-1'), PASSWORD);
    expect(readdirSync(join(target, 'data'))).toEqual(['channel.db']);
    expect(readFileSync(join(target, 'unrelated.txt'), 'utf8')).toBe('kept');
  });
});
