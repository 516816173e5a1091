// The pure checks of BackupService: what a backup needs of its node, and the upload quota.
import { describe, expect, it } from 'vitest';
import type { Node } from '../domain/nodes.ts';
import { AppError } from '../errors.ts';
import { requireBackupable, requireQuota } from './service.ts';

const node = (more: Partial<Node>) => ({ id: 'n1', status: 'RUNNING', desiredState: 'running', initialized: true, ...more }) as Node;
const thrown = (fn: () => void) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, status: err.status, message: err.message, details: err.details };
    throw err;
  }
  return undefined;
};

describe('what a backup needs of its node', () => {
  it('takes a RUNNING node that stays running and has a wallet', () => {
    expect(thrown(() => requireBackupable(node({})))).toBeUndefined();
  });

  it('refuses a destroyed node first, whatever else holds', () => {
    expect(thrown(() => requireBackupable(node({ status: 'DESTROYING', initialized: false })))).toEqual({
      code: 'node_destroyed',
      status: 409,
      message: 'node n1 is DESTROYING',
      details: { status: 'DESTROYING' },
    });
  });

  it('refuses a node that is not running, or being stopped, saying which', () => {
    expect(thrown(() => requireBackupable(node({ status: 'PAUSED' })))).toMatchObject({ code: 'node_not_running', message: 'node n1 is PAUSED; a backup needs it RUNNING' });
    expect(thrown(() => requireBackupable(node({ desiredState: 'stopped' })))).toMatchObject({
      code: 'node_not_running',
      message: 'node n1 is being stopped; a backup needs it RUNNING',
      details: { status: 'RUNNING' },
    });
  });

  it('refuses a node without a wallet: there is nothing to back up', () => {
    expect(thrown(() => requireBackupable(node({ initialized: false })))).toMatchObject({ code: 'node_not_initialized', status: 409 });
  });
});

describe('the upload quota', () => {
  const quota = (count: number, bytes: number, size: number) => thrown(() => requireQuota({ count, bytes }, size, 1000, 3));

  it('takes an upload that keeps both the count and the bytes within the quota, up to the limit itself', () => {
    expect(quota(2, 900, 100)).toBeUndefined();
    expect(quota(0, 0, 1000)).toBeUndefined();
  });

  it('refuses one file too many, or one byte too many, saying what is kept', () => {
    expect(quota(3, 0, 1)).toMatchObject({ code: 'backup_quota_exceeded', status: 409, details: { quotaBytes: 1000, quotaCount: 3, usedBytes: 0, usedCount: 3 } });
    expect(quota(1, 900, 101)).toMatchObject({ code: 'backup_quota_exceeded', details: { usedBytes: 900, usedCount: 1 } });
    expect(quota(1, 900, 101)!.message).toContain('you keep 1 files of 900 bytes');
  });
});
