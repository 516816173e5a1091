// Carries out the authentication rollout's pass job (declared in jobs/catalog.ts), as pass-job.ts
// does a release rollout's: one transaction, the passes still queued marked done first so this one
// answers them too, then the pass (authentication-rollout.ts).
import type { Database } from '../../db/database.ts';
import { absorbQueuedJobs } from '../../db/jobs.ts';
import { exponentialBackoff, type JobDefinition } from '../../jobs/worker.ts';
import type { Logger } from '../../logger.ts';
import { AUTHENTICATION_ROLLOUT_PASS_JOB, type AuthenticationRolloutPassPayload } from '../../jobs/catalog.ts';
import { runAuthenticationRolloutPass } from './authentication-rollout.ts';

export function authenticationRolloutPassJob(deps: { db: Database; log: Logger }): JobDefinition<AuthenticationRolloutPassPayload> {
  return {
    ...AUTHENTICATION_ROLLOUT_PASS_JOB,
    leaseMs: 30_000,
    backoffMs: exponentialBackoff(1_000, 30_000),
    async handle(_p, job) {
      const pass = await deps.db.transaction(async (tx) => {
        await absorbQueuedJobs(tx, AUTHENTICATION_ROLLOUT_PASS_JOB.kind, {});
        return runAuthenticationRolloutPass(tx, `after:${job.id}`);
      });
      if (pass.started > 0) deps.log.info({ started: pass.started }, 'authentication rollout pass started restarts');
    },
    async onGiveUp(_p, error) {
      deps.log.error({ err: error.message }, 'an authentication rollout pass failed for good; the next settled restart or a resume asks for another');
    },
  };
}
