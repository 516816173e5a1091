// Some writes have a reader in this process waiting for them: the webhook dispatcher waits for
// node events, the job workers for jobs. The code that writes says so, with
// `tx.signalAfterCommit('node-events')` next to its INSERT, and the readers' listeners (registered where the service is put together) are
// called once that write has committed: a wake before the commit would find nothing, and a
// rolled-back write wakes nobody. Writes of other processes are found by the readers' polls.
export type CommitSignal = 'node-events' | 'jobs';

export class CommitSignals {
  private readonly listeners = new Map<CommitSignal, Array<() => void>>();

  /** `listener` only wakes something: it runs right after a commit, in the committing caller's turn. */
  on(signal: CommitSignal, listener: () => void) {
    this.listeners.set(signal, [...(this.listeners.get(signal) ?? []), listener]);
  }

  /** Calls the listeners of each signal once. */
  emit(signals: Iterable<CommitSignal>) {
    for (const signal of signals) {
      for (const listener of this.listeners.get(signal) ?? []) {
        try {
          listener();
        } catch (err) {
          // The write has committed whatever a listener does: its caller must not see a failure.
          process.emitWarning(err instanceof Error ? err : new Error(String(err)));
        }
      }
    }
  }

  /**
   * Runs one transaction, handing it the function its statements signal through; the signals are
   * emitted once it has committed (`run` resolved), and dropped if it rolled back (`run` threw).
   */
  async afterCommitOf<T>(run: (signal: (s: CommitSignal) => void) => Promise<T>): Promise<T> {
    const signalled = new Set<CommitSignal>();
    const result = await run((s) => void signalled.add(s));
    this.emit(signalled);
    return result;
  }
}
