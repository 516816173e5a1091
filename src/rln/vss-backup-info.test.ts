// RLN's /vssbackupinfo as the service reads it: RLN's snake_case answer, its refusals, and an answer
// that is not RLN's.
import { describe, expect, it } from 'vitest';
import { parseVssBackupInfo } from './vss-backup-info.ts';
import { AppError } from '../errors.ts';

const answer = (status: number, body: unknown) => ({ status, rawHeaders: [], body: Buffer.from(JSON.stringify(body)) });

describe('parseVssBackupInfo', () => {
  it("maps RLN's answer", () => {
    expect(parseVssBackupInfo(answer(200, { backup_exists: true, server_version: 7, backup_required: true, pending_kv_writes: 3 }))).toEqual({
      backupExists: true,
      serverVersion: 7,
      backupRequired: true,
      pendingKvWrites: 3,
    });
    expect(parseVssBackupInfo(answer(200, { backup_exists: false, server_version: null, backup_required: false, pending_kv_writes: 0 }))).toMatchObject({ serverVersion: null, pendingKvWrites: 0 });
  });

  it("throws the node's refusal (a locked node, VSS not configured)", () => {
    const refused = () => parseVssBackupInfo(answer(403, { error: 'Node is locked', name: 'LockedNode' }));
    expect(refused).toThrow(AppError);
    expect(refused).toThrow(/Node is locked/);
  });

  it('throws node_error on an answer without a pending count', () => {
    for (const body of [{}, { pending_kv_writes: -1 }, { pending_kv_writes: 1.5 }, { pending_kv_writes: '2' }, 'text']) {
      expect(() => parseVssBackupInfo(answer(200, body)), JSON.stringify(body)).toThrow("the node's /vssbackupinfo answer is not what RLN answers");
    }
  });
});
