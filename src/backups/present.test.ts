import { describe, expect, it } from 'vitest';
import type { BackupRow } from '../db/backups.ts';
import { backupBlobKey, nodeFileName } from './backup-file.ts';
import { restoreCommands } from './export.ts';
import { presentBackup } from './present.ts';

const row = (more: Partial<BackupRow> = {}): BackupRow => ({
  id: 'b1',
  user_id: 'u1',
  node_id: 'n1',
  origin: 'node',
  status: 'SUCCEEDED',
  network: 'regtest',
  image_version: 'v1',
  was_unlocked: false,
  runner: null,
  heartbeat_at: new Date('2026-01-01T00:00:00.000Z'),
  blob_key: 'n1/b1.rlnbackup',
  size_bytes: '2048',
  sha256: 'ab',
  error_code: null,
  error_message: null,
  unlock_error: null,
  source_node_id: null,
  source_made_at: null,
  for_export: false,
  created_at: new Date('2026-01-01T00:00:00.000Z'),
  finished_at: new Date('2026-01-01T00:00:05.000Z'),
  ...more,
});

describe('a backup as the API answers it', () => {
  it('names its node as its source, its size as a number (PostgreSQL answers bigint as text) and its times in ISO form', () => {
    expect(presentBackup(row())).toEqual({
      backupId: 'b1',
      nodeId: 'n1',
      origin: 'node',
      network: 'regtest',
      sourceNodeId: 'n1',
      status: 'SUCCEEDED',
      sizeBytes: 2048,
      sha256: 'ab',
      imageVersion: 'v1',
      createdAt: '2026-01-01T00:00:00.000Z',
      finishedAt: '2026-01-01T00:00:05.000Z',
      forExport: false,
    });
  });

  it("gives an upload the node it was recognised as a backup of, and an unfinished one no size or end", () => {
    const upload = presentBackup(row({ origin: 'upload', node_id: null, source_node_id: 'n7', status: 'IN_PROGRESS', size_bytes: null, finished_at: null }));
    expect([upload.nodeId, upload.sourceNodeId, upload.sizeBytes, upload.finishedAt]).toEqual([null, 'n7', null, null]);
  });

  it('says why a FAILED backup failed, with a code and message even when none was stored, and nothing of errors otherwise', () => {
    expect(presentBackup(row({ status: 'FAILED', error_code: 'node_refused', error_message: 'no wallet' })).error).toEqual({ code: 'node_refused', message: 'no wallet' });
    expect(presentBackup(row({ status: 'FAILED' })).error).toEqual({ code: 'backup_failed', message: 'the backup failed' });
    expect('error' in presentBackup(row({ error_code: 'left over' }))).toBe(false);
  });

  it('carries an unlock that failed after the backup only when there was one', () => {
    expect(presentBackup(row({ unlock_error: 'wrong password' })).unlockError).toBe('wrong password');
    expect('unlockError' in presentBackup(row())).toBe(false);
  });
});

describe("a backup's files", () => {
  it('keeps a node backup under its node and an upload under uploads/', () => {
    expect(backupBlobKey('b1', 'n1')).toBe('n1/b1.rlnbackup');
    expect(backupBlobKey('b2', null)).toBe('uploads/b2.rlnbackup');
    expect(nodeFileName('b1')).toBe('rln-cloud-backup-b1');
  });

  it("restores an export elsewhere with one file name throughout, on the node's network, the password left to its owner", () => {
    const commands = restoreCommands('n1', 'b1', 'testnet');
    const file = 'rln-node-n1-backup-b1.rlnbackup';
    expect(commands[0]).toBe(`curl -fo ${file} "<downloadUrl of GET /api/nodes/n1/backups/b1>"`);
    expect(commands.filter((c) => c.includes(file))).toHaveLength(3);
    expect(commands.find((c) => c.startsWith('rgb-lightning-node'))).toContain('--network testnet');
    expect(commands.filter((c) => c.includes('"password": "<password>"'))).toHaveLength(2);
  });
});
