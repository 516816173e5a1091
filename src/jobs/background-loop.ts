// The loop every background part runs: do a run, sleep until woken or the interval passes, do
// another, until stopped. Wakes coalesce: however many arrive during a run, exactly one more run
// follows it, so a burst of work (jobs finishing, events written) costs a few runs, not one each.
// A run that throws is logged and the loop goes on: a failing database must not end the part.
export interface BackgroundLoopOptions {
  /** What a run does, in a few words: logged as "<name> failed" when a run throws. */
  name: string;
  /** One run. Calling wake() from inside it asks for another right after (there is more to do). */
  run: () => Promise<unknown>;
  /** Sleep between runs when nothing wakes the loop; without it the loop runs only when woken. */
  intervalMs?: number;
  /** Where failed runs are reported (a pino Logger fits). */
  log: { error(details: { err: unknown }, message: string): void };
}

export class BackgroundLoop {
  private started = false;
  private stopped = false;
  private wakeRequested = false;
  private interruptSleep: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly opts: BackgroundLoopOptions) {}

  /** True once stop() was called: a long run checks it to end early. */
  get stopping(): boolean {
    return this.stopped;
  }

  /** Runs at once, then whenever woken or the interval passed. */
  start() {
    if (this.started) return;
    this.started = true;
    this.loop = this.runUntilStopped();
  }

  /** Runs now if sleeping, or once more after the run in progress. Ignored once stopped. */
  wake() {
    this.wakeRequested = true;
    this.interruptSleep?.();
  }

  /** No run starts after this; resolves once the run in progress (if any) has finished. */
  async stop() {
    this.stopped = true;
    this.interruptSleep?.();
    await this.loop;
  }

  private async runUntilStopped() {
    while (!this.stopped) {
      this.wakeRequested = false;
      try {
        await this.opts.run();
      } catch (err) {
        this.opts.log.error({ err }, `${this.opts.name} failed`);
      }
      if (this.stopped) break;
      if (this.wakeRequested) {
        // A macrotask turn between runs: a run that keeps asking for more cannot starve timers and I/O.
        await new Promise<void>((resolve) => setImmediate(resolve));
      } else {
        await this.sleep();
      }
    }
  }

  private sleep() {
    return new Promise<void>((resolve) => {
      const timer = this.opts.intervalMs === undefined ? undefined : setTimeout(() => done(), this.opts.intervalMs);
      // A sleeping loop never keeps the process alive: whoever started it ends it with stop().
      timer?.unref();
      const done = () => {
        clearTimeout(timer);
        this.interruptSleep = undefined;
        resolve();
      };
      this.interruptSleep = done;
    });
  }
}
