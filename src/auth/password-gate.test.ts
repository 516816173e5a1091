import { describe, expect, it } from 'vitest';
import { PasswordGate } from './password-gate.ts';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe('PasswordGate', () => {
  it('runs up to its concurrency, queues up to its queue in order, refuses the rest with 503 server_busy', async () => {
    const gate = new PasswordGate({ concurrency: 2, queue: 1 });
    const order: string[] = [];
    const [a, b] = [deferred(), deferred()];
    const first = gate.run(() => a.promise.then(() => order.push('a')));
    const second = gate.run(() => b.promise.then(() => order.push('b')));
    const queued = gate.run(async () => order.push('queued'));
    await expect(gate.run(async () => 'never')).rejects.toMatchObject({ code: 'server_busy', status: 503, details: { retryAfterSeconds: 1 } });
    expect(gate.refused).toBe(1);
    b.resolve();
    await second;
    // The slot b left went to the queued hash, not back to the pool: a is still running.
    await queued;
    expect(order).toEqual(['b', 'queued']);
    a.resolve();
    await first;
    expect(gate.started).toBe(3);
    // Every slot free again: two run, one waits, none is refused.
    await Promise.all([gate.run(async () => {}), gate.run(async () => {}), gate.run(async () => {})]);
  });

  it('frees the slot when a hash fails', async () => {
    const gate = new PasswordGate({ concurrency: 1, queue: 0 });
    await expect(gate.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(gate.run(async () => 'ok')).resolves.toBe('ok');
  });
});
