import { describe, expect, it } from 'vitest';
import { CommitSignals } from './commit-signals.ts';

describe('CommitSignals', () => {
  it('emits what a transaction signalled once it resolved, each signal once', async () => {
    const signals = new CommitSignals();
    let heard = 0;
    signals.on('node-events', () => heard++);
    const result = await signals.afterCommitOf(async (signal) => {
      signal('node-events');
      signal('node-events');
      expect(heard).toBe(0);
      return 'committed';
    });
    expect(result).toBe('committed');
    expect(heard).toBe(1);
  });

  it('drops the signals of a transaction that threw', async () => {
    const signals = new CommitSignals();
    let heard = 0;
    signals.on('node-events', () => heard++);
    await expect(
      signals.afterCommitOf(async (signal) => {
        signal('node-events');
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(heard).toBe(0);
  });

  it('reports a throwing listener as a warning, still calls the others, and does not fail the committed caller', async () => {
    const signals = new CommitSignals();
    let heard = 0;
    signals.on('node-events', () => {
      throw new Error('listener bug');
    });
    signals.on('node-events', () => heard++);
    const warned = new Promise<Error>((resolve) => process.once('warning', resolve));
    await expect(signals.afterCommitOf(async (signal) => signal('node-events'))).resolves.toBeUndefined();
    expect(heard).toBe(1);
    expect((await warned).message).toBe('listener bug');
  });
});
