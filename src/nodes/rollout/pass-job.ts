// Carries out the rollout pass job (declared in jobs/catalog.ts; enqueue-pass.ts asks for it, as the build job
// enqueues it as it settles an upgrade of a rollout). One transaction: the passes of the version
// still queued are marked done first, so the pass that follows, which sees every change committed
// before it, answers them too; then the pass itself (rollout.ts), which asks for a later one when
// it leaves the rollout waiting on busy nodes.
import type { Database } from '../../db/database.ts';
import { absorbQueuedJobs } from '../../db/jobs.ts';
import { exponentialBackoff, type JobDefinition } from '../../jobs/worker.ts';
import type { Logger } from '../../logger.ts';
import { ROLLOUT_PASS_JOB, type RolloutPassPayload } from '../../jobs/catalog.ts';
import { runRolloutPass } from './rollout.ts';

export function rolloutPassJob(deps: { db: Database; log: Logger }): JobDefinition<RolloutPassPayload> {
  return {
    ...ROLLOUT_PASS_JOB,
    leaseMs: 30_000,
    backoffMs: exponentialBackoff(1_000, 30_000),
    async handle(p, job) {
      const pass = await deps.db.transaction(async (tx) => {
        await absorbQueuedJobs(tx, ROLLOUT_PASS_JOB.kind, { version: p.version });
        return runRolloutPass(tx, p.version, `after:${job.id}`);
      });
      if (pass.started > 0) deps.log.info({ version: p.version, started: pass.started }, 'rollout pass started upgrades');
    },
    async onGiveUp(p, error) {
      deps.log.error({ version: p.version, err: error.message }, 'a rollout pass failed for good; the next settled upgrade or a resume asks for another');
    },
  };
}
