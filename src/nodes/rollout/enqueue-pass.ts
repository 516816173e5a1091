// Asks for a pass of a release's rollout: the job (declared in jobs/catalog.ts) that
// pass-job.ts carries out; rollout.ts is the pass. The build enqueues it in the transaction that
// settles an upgrade, and a pass or a publish when it leaves the rollout waiting.
//
// Passes are coalesced per version, not queued behind each other: every request is a job row of
// its own (inserting one takes no lock a concurrent build would wait on, so builds finishing
// together never queue on the rollout's row lock), and a pass, under that lock, first marks done
// every pass of its version still queued: the pass that follows sees everything they were asked
// for. A burst of finished upgrades thus costs a few passes, not one each; and since the request
// commits with the build, a crash cannot lose it.
import type { Queryable } from '../../db/database.ts';
import { insertJob } from '../../db/jobs.ts';
import { ROLLOUT_PASS_JOB } from '../../jobs/catalog.ts';

/** Asks, in the caller's transaction, for a pass of `version`'s rollout (after `delayMs`, if given). */
export async function enqueueRolloutPass(tx: Queryable, version: string, askedBy: string, delayMs?: number): Promise<void> {
  await insertJob(tx, { ...ROLLOUT_PASS_JOB.newJob({ v: 1, version, askedBy }), delayMs });
}
