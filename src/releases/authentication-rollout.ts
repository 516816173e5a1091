// The operator's side of the authentication rollout (issue #40, point 5; the pass is
// nodes/rollout/authentication-rollout.ts): `rln-cloud authentication rollout | status | resume`.
import type { Database } from '../db/database.ts';
import {
  countAuthenticationRolloutNodes,
  enrolNodesWithoutAuthentication,
  findAuthenticationRollout,
  insertAuthenticationRollout,
  listAuthenticationRolloutNodes,
  lockAuthenticationRollout,
  updateAuthenticationRollout,
} from '../db/authentication-rollout.ts';
import { AppError } from '../errors.ts';
import { runAuthenticationRolloutPass } from '../nodes/rollout/authentication-rollout.ts';
import type { PublishOptions, RolloutDefaults } from './service.ts';

/** Failed restarts the status lists with their reasons (the count covers them all). */
const FAILED_LISTED = 20;

export class AuthenticationRolloutService {
  constructor(
    private readonly db: Database,
    private readonly defaults: RolloutDefaults,
  ) {}

  /**
   * Enrols every live node whose daemon was started without authentication and starts the first
   * restarts, atomically. Refused while another runs or waits paused; a completed one is replaced.
   */
  async start(opts: PublishOptions = {}) {
    return this.db.transaction(async (tx) => {
      const rollout = await insertAuthenticationRollout(tx, opts.concurrency ?? this.defaults.concurrency, opts.failureBudget ?? this.defaults.failureBudget);
      if (!rollout) {
        const current = (await findAuthenticationRollout(tx))!;
        throw new AppError(
          'invalid_state',
          current.state === 'paused'
            ? 'an authentication rollout is paused; see rln-cloud authentication status, then resume it'
            : 'an authentication rollout is running; see rln-cloud authentication status',
        );
      }
      const nodes = await enrolNodesWithoutAuthentication(tx);
      const { started } = await runAuthenticationRolloutPass(tx, `start:${Date.now()}`);
      return { state: nodes === 0 ? 'completed' : 'running', concurrency: rollout.concurrency, failureBudget: rollout.failure_budget, nodes, started };
    });
  }

  /** The rollout's progress, with the failed restarts' reasons. */
  async status() {
    const rollout = await findAuthenticationRollout(this.db);
    if (!rollout) throw new AppError('not_found', 'no authentication rollout was started; see rln-cloud authentication rollout');
    const nodes = await countAuthenticationRolloutNodes(this.db);
    const failed = await listAuthenticationRolloutNodes(this.db, 'failed', FAILED_LISTED);
    return {
      state: rollout.state,
      pausedReason: rollout.paused_reason,
      concurrency: rollout.concurrency,
      failureBudget: rollout.failure_budget,
      total: Object.values(nodes).reduce((a, b) => a + b, 0),
      nodes,
      failed: failed.map((f) => ({ nodeId: f.node_id, buildNumber: f.build_number, reason: f.error })),
      startedAt: rollout.created_at.toISOString(),
      updatedAt: rollout.updated_at.toISOString(),
    };
  }

  /** Resumes a paused rollout, its failure budget `extraFailures` beyond the failures so far. */
  async resume(extraFailures = this.defaults.failureBudget) {
    await this.db.transaction(async (tx) => {
      const rollout = await lockAuthenticationRollout(tx);
      if (!rollout) throw new AppError('not_found', 'no authentication rollout was started');
      if (rollout.state !== 'paused') throw new AppError('invalid_state', `the authentication rollout is ${rollout.state}, not paused`);
      const { failed } = await countAuthenticationRolloutNodes(tx);
      await updateAuthenticationRollout(tx, { state: 'running', failure_budget: failed + extraFailures });
      await runAuthenticationRolloutPass(tx, `resume:${Date.now()}`);
    });
    return this.status();
  }
}
