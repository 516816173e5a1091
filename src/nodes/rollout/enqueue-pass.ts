// The durable job that runs a pass of a release's rollout (nodes/rollout/pass-job.ts carries it
// out; nodes/rollout/rollout.ts is the pass). Declared here because the build job enqueues it, in the
// transaction that settles an upgrade, and releases/ builds on nodes/, not the other way round.
//
// Passes are coalesced per version, not queued behind each other: every request is a job row of
// its own (inserting one takes no lock a concurrent build would wait on, so builds finishing
// together never queue on the rollout's row lock), and a pass, under that lock, first marks done
// every pass of its version still queued: the pass that follows sees everything they were asked
// for. A burst of finished upgrades thus costs a few passes, not one each; and since the request
// commits with the build, a crash cannot lose it.
import { Type } from '@sinclair/typebox';
import type { Queryable } from '../../db/database.ts';
import { insertJob } from '../../db/jobs.ts';
import { declareJob } from '../../jobs/job-declaration.ts';

export const ROLLOUT_PASS_JOB = declareJob({
  kind: 'release.rollout-pass',
  maxAttempts: 5,
  /** `askedBy` names what asked for the pass (a settled build, a publish, an earlier pass): one job per request. */
  payload: Type.Object({ v: Type.Literal(1), version: Type.String(), askedBy: Type.String() }),
  singletonKey: (p) => `rollout-pass:${p.version}:${p.askedBy}`,
});
export type RolloutPassPayload = ReturnType<typeof ROLLOUT_PASS_JOB.parse>;

/** Asks, in the caller's transaction, for a pass of `version`'s rollout (after `delayMs`, if given). */
export async function enqueueRolloutPass(tx: Queryable, version: string, askedBy: string, delayMs?: number): Promise<void> {
  await insertJob(tx, { ...ROLLOUT_PASS_JOB.newJob({ v: 1, version, askedBy }), delayMs });
}
