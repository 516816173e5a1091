// Rollout passes asked for outside a transaction: when an upgrade build settles, its rollout has a
// free slot, but the pass runs here rather than in the build's completing transaction, so builds
// finishing together never queue on the rollout's row lock. Requests that come while a pass runs
// are folded into one more pass, so a burst of finished upgrades costs a few transactions, not one
// each. If this process dies first, the reconcile loop's advanceAll runs the pass.
import type { Database } from '../db/database.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';
import type { Logger } from '../logger.ts';
import { advanceRollout } from './rollout.ts';

export interface RolloutPassesOptions {
  db: Database;
  log: Logger;
}

export class RolloutPasses {
  private readonly requested = new Set<string>();
  private readonly loop: BackgroundLoop;

  constructor(private readonly opts: RolloutPassesOptions) {
    // No interval: the reconcile loop's advanceAll is the periodic pass.
    this.loop = new BackgroundLoop({ name: 'rollout pass', log: opts.log, run: () => this.runRequested() });
  }

  start() {
    this.loop.start();
  }

  async stop() {
    await this.loop.stop();
  }

  /** Runs a pass of `version`'s rollout soon. */
  request(version: string) {
    this.requested.add(version);
    this.loop.wake();
  }

  private async runRequested() {
    // A version leaves the set as its pass starts: one requested meanwhile gets another pass. After
    // a failure the versions not reached yet stay for the next run (advanceAll also covers them).
    for (const version of this.requested) {
      this.requested.delete(version);
      await this.opts.db.transaction((tx) => advanceRollout(tx, version));
    }
  }
}
