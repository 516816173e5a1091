import { describe, expect, it } from 'vitest';
import { continuousStateFor, refusesBackupRestore } from './continuous-state.ts';

describe('refusesBackupRestore', () => {
  it('refuses an RLN backup only for a node with continuous state on', () => {
    expect(refusesBackupRestore({ continuousState: false })).toBe(false);
    expect(refusesBackupRestore({ continuousState: true })).toBe(true);
  });
});

describe('continuousStateFor', () => {
  it('defaults to what the release supports and refuses asking for it where unsupported', () => {
    expect(continuousStateFor('devnode-1', undefined)).toBe(true);
    expect(continuousStateFor('devnode-1', false)).toBe(false);
    expect(() => continuousStateFor('0123456789abcdef0123456789abcdef01234567', true)).toThrow(/continuous state needs/);
  });
});
