import { describe, expect, it } from 'vitest';
import { refusesBackupRestore } from './continuous-state.ts';

describe('refusesBackupRestore', () => {
  it('refuses an RLN backup only for a node with continuous state on', () => {
    expect(refusesBackupRestore({ settings: {} })).toBe(false);
    expect(refusesBackupRestore({ settings: { webhookUrl: 'https://hooks.example/a' } })).toBe(false);
    expect(refusesBackupRestore({ settings: { continuousState: false } as never })).toBe(false);
    expect(refusesBackupRestore({ settings: { continuousState: true } as never })).toBe(true);
  });
});
