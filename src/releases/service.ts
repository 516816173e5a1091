// The image release catalog and its rollouts. Publishing a version makes it the latest: new nodes
// get it, nodes of Scale and Wallet users are upgraded by a rolling rollout, and the others see
// an upgrade available.
import type { Database } from '../db/database.ts';
import { insertRelease, latestRelease, listReleases } from '../db/releases.ts';
import {
  countRolloutNodes,
  enrolRolloutNodes,
  findRollout,
  insertRollout,
  listRunningRollouts,
  lockRollout,
  recordUpgradeAvailableEvents,
  updateRollout,
} from '../db/rollouts.ts';
import { AppError } from '../errors.ts';
import { advanceRollout, runRolloutPass } from '../nodes/rollout/rollout.ts';

// Image versions are RLN commit ids or release tags: keep them safe to put in paths and commands.
export const VERSION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface RolloutDefaults {
  concurrency: number;
  failureBudget: number;
}

export interface PublishOptions {
  concurrency?: number;
  failureBudget?: number;
}

export class ReleaseService {
  constructor(
    private readonly db: Database,
    private readonly rolloutDefaults: RolloutDefaults,
  ) {}

  /** Records the version, enrols the nodes that upgrade automatically and starts the first upgrades, atomically. */
  async publish(version: string, opts: PublishOptions = {}) {
    if (!VERSION_PATTERN.test(version)) {
      throw new AppError('invalid_request', 'a version is 1-64 characters of letters, digits, ".", "_" or "-", starting with a letter or digit');
    }
    const result = await this.db.transaction(async (tx) => {
      const row = await insertRelease(tx, version);
      if (!row) throw new AppError('release_exists', `version ${version} was already published`);
      const rollout = await insertRollout(
        tx,
        version,
        opts.concurrency ?? this.rolloutDefaults.concurrency,
        opts.failureBudget ?? this.rolloutDefaults.failureBudget,
      );
      const enrolled = await enrolRolloutNodes(tx, version);
      const notified = await recordUpgradeAvailableEvents(tx, version);
      const { started } = await runRolloutPass(tx, version, 'publish');
      return {
        version: row.version,
        releasedAt: row.released_at.toISOString(),
        latest: true,
        rollout: { concurrency: rollout.concurrency, failureBudget: rollout.failure_budget, nodes: enrolled, started },
        upgradeAvailableTo: notified,
      };
    });
    return result;
  }

  async list() {
    const rows = await listReleases(this.db);
    const latest = rows.at(-1)?.version;
    return rows.map((r) => ({ version: r.version, releasedAt: r.released_at.toISOString(), latest: r.version === latest }));
  }

  /** A rollout's progress: its state and how many of its nodes are in each state. */
  async status(version: string) {
    const rollout = await findRollout(this.db, version);
    if (!rollout) throw new AppError('release_not_found', `no rollout for version ${version}; see rln-cloud release list`);
    const nodes = await countRolloutNodes(this.db, version);
    const total = Object.values(nodes).reduce((a, b) => a + b, 0);
    return {
      version,
      state: rollout.state,
      pausedReason: rollout.paused_reason,
      concurrency: rollout.concurrency,
      failureBudget: rollout.failure_budget,
      total,
      nodes,
      startedAt: rollout.created_at.toISOString(),
      updatedAt: rollout.updated_at.toISOString(),
    };
  }

  /**
   * Resumes a paused rollout. Its failure budget grows by `extraFailures` (default: the configured
   * budget) beyond the failures so far, or it would pause again at once.
   */
  async resume(version: string, extraFailures = this.rolloutDefaults.failureBudget) {
    await this.db.transaction(async (tx) => {
      const rollout = await lockRollout(tx, version);
      if (!rollout) throw new AppError('release_not_found', `no rollout for version ${version}`);
      if (rollout.state !== 'paused') throw new AppError('invalid_state', `the rollout of ${version} is ${rollout.state}, not paused`);
      const { failed } = await countRolloutNodes(tx, version);
      await updateRollout(tx, version, { state: 'running', failure_budget: failed + extraFailures });
      // Each resume is its own request: one still running must not swallow it.
      await runRolloutPass(tx, version, `resume:${Date.now()}`);
    });
    return this.status(version);
  }

  /**
   * One pass over every running rollout, now. Serving needs none (the rollout pass job asks for
   * every pass, durably); tests and benchmarks use it to look at once. Returns upgrades started.
   */
  async advanceAll(): Promise<number> {
    let started = 0;
    for (const rollout of await listRunningRollouts(this.db)) {
      started += (await this.db.transaction((tx) => advanceRollout(tx, rollout.version))).started;
    }
    return started;
  }

  /** Seeds the catalog with its first version on the very first start. */
  async seed(version: string) {
    if (!(await latestRelease(this.db))) await insertRelease(this.db, version);
  }
}
