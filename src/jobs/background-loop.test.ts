import { describe, expect, it } from 'vitest';
import { BackgroundLoop } from './background-loop.ts';

const HOUR = 3600_000;

/** A promise with its resolve exposed: a run that finishes when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

async function until(cond: () => boolean, timeoutMs = 2_000) {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 2));
  }
}

const settle = () => new Promise((r) => setTimeout(r, 20));

function recordingLog() {
  const errors: Array<{ err: unknown; message: string }> = [];
  return { errors, error: (details: { err: unknown }, message: string) => void errors.push({ err: details.err, message }) };
}

describe('BackgroundLoop', () => {
  it('runs at start, then again after each interval', async () => {
    let runs = 0;
    const loop = new BackgroundLoop({ name: 'test', intervalMs: 10, log: recordingLog(), run: async () => void runs++ });
    loop.start();
    await until(() => runs >= 3);
    await loop.stop();
  });

  it('runs at once when woken while sleeping', async () => {
    let runs = 0;
    const loop = new BackgroundLoop({ name: 'test', intervalMs: HOUR, log: recordingLog(), run: async () => void runs++ });
    loop.start();
    await until(() => runs === 1);
    loop.wake();
    await until(() => runs === 2);
    await settle();
    expect(runs).toBe(2);
    await loop.stop();
  });

  it('folds any number of wakes during a run into exactly one more run', async () => {
    const gates = [gate(), gate()];
    let runs = 0;
    const loop = new BackgroundLoop({
      name: 'test',
      intervalMs: HOUR,
      log: recordingLog(),
      run: async () => {
        runs++;
        await gates[runs - 1]?.opened;
      },
    });
    loop.start();
    await until(() => runs === 1);
    loop.wake();
    loop.wake();
    loop.wake();
    gates[0]!.open();
    await until(() => runs === 2);
    gates[1]!.open();
    await settle();
    expect(runs).toBe(2);
    await loop.stop();
  });

  it('runs again right away when a run wakes its own loop (more work is waiting)', async () => {
    let runs = 0;
    const loop: BackgroundLoop = new BackgroundLoop({
      name: 'test',
      intervalMs: HOUR,
      log: recordingLog(),
      run: async () => {
        if (++runs < 5) loop.wake();
      },
    });
    loop.start();
    await until(() => runs === 5);
    await settle();
    expect(runs).toBe(5);
    await loop.stop();
  });

  it('without an interval, runs once at start and then only when woken', async () => {
    let runs = 0;
    const loop = new BackgroundLoop({ name: 'test', log: recordingLog(), run: async () => void runs++ });
    loop.start();
    await settle();
    expect(runs).toBe(1);
    loop.wake();
    await until(() => runs === 2);
    await loop.stop();
  });

  it('stop waits for the run in progress, and no run starts after it', async () => {
    const running = gate();
    let runs = 0;
    let finished = false;
    const loop = new BackgroundLoop({
      name: 'test',
      intervalMs: 1,
      log: recordingLog(),
      run: async () => {
        runs++;
        await running.opened;
        finished = true;
      },
    });
    loop.start();
    await until(() => runs === 1);
    loop.wake();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    expect(loop.stopping).toBe(true);
    await settle();
    expect(stopped).toBe(false);
    running.open();
    await stopping;
    expect(finished).toBe(true);
    loop.wake();
    await settle();
    expect(runs).toBe(1);
  });

  it('stop ends a sleeping loop at once', async () => {
    const loop = new BackgroundLoop({ name: 'test', intervalMs: HOUR, log: recordingLog(), run: async () => {} });
    loop.start();
    await settle();
    const t0 = Date.now();
    await loop.stop();
    expect(Date.now() - t0).toBeLessThan(500);
  });

  it('logs a run that throws and keeps running', async () => {
    const log = recordingLog();
    let runs = 0;
    const loop = new BackgroundLoop({
      name: 'test sweep',
      intervalMs: 5,
      log,
      run: async () => {
        if (++runs === 1) throw new Error('database gone');
      },
    });
    loop.start();
    await until(() => runs >= 3);
    await loop.stop();
    expect(log.errors).toHaveLength(1);
    expect(log.errors[0]!.message).toBe('test sweep failed');
    expect((log.errors[0]!.err as Error).message).toBe('database gone');
  });

  it('stop before start resolves and the loop never runs', async () => {
    let runs = 0;
    const loop = new BackgroundLoop({ name: 'test', intervalMs: 5, log: recordingLog(), run: async () => void runs++ });
    await loop.stop();
    loop.start();
    await settle();
    expect(runs).toBe(0);
  });
});
