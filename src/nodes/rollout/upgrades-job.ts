// The durable job that carries out a batch of a rollout's upgrades together. A rollout pass
// starts up to its concurrency of upgrades at once; one job each cost about fourteen statements an
// upgrade (a claim, three phase updates, a transaction to close it, a pass to fill its slot), so a
// fleet's rollout ran at a few hundred upgrades a second. Here the batch's builds move through
// their steps side by side, each step recorded for all of them in one statement, and end in one
// transaction (build-end.ts): the statements are per batch, not per node. Each node still has its
// own build, its own rollback and its own events, exactly as the one-build job gives them.
//
// Like the build job, every step is idempotent: after a crash the job runs again from the top, and
// only the builds still in progress are carried out again.
import { findOpenBuilds, setBuildPhases } from '../../db/builds.ts';
import type { Queryable } from '../../db/database.ts';
import { findNodes } from '../../db/nodes.ts';
import type { Build, BuildStep } from '../../domain/nodes.ts';
import { exponentialBackoff, type JobDefinition } from '../../jobs/worker.ts';
import { endBuilds } from '../builds/build-end.ts';
import { replaceImage, type BuildJobDeps } from '../builds/build-job.ts';
import { ROLLOUT_UPGRADES_JOB, type RolloutUpgradesPayload } from '../../jobs/catalog.ts';

export function rolloutUpgradesJob(deps: BuildJobDeps): JobDefinition<RolloutUpgradesPayload> {
  return {
    ...ROLLOUT_UPGRADES_JOB,
    leaseMs: 30_000,
    backoffMs: exponentialBackoff(1_000, 30_000),
    async handle(p, job) {
      const builds = await findOpenBuilds(deps.db, p.builds);
      const nodes = new Map((await findNodes(deps.db, builds.map((b) => b.nodeId))).map((n) => [n.id, n]));
      const open = builds.filter((b) => nodes.has(b.nodeId)); // a purged node has nothing left to upgrade
      if (open.length === 0) return;
      deps.log.info({ version: p.version, builds: open.length, attempt: job.attempts }, 'rollout upgrades running');
      const phases = coalescedPhases(deps.db);
      const ends = await Promise.all(
        open.map(async (build) => ({ which: build, end: await replaceImage(deps, nodes.get(build.nodeId)!, build, (phase) => phases.enter(build, phase)) })),
      );
      await endBuilds(deps, ends);
      const failed = ends.filter((e) => e.end.outcome === 'FAILURE').length;
      deps.log.info({ version: p.version, succeeded: ends.length - failed, failed }, 'rollout upgrades ended');
    },
    async onGiveUp(p, error) {
      await endBuilds(
        deps,
        p.builds.map((b) => ({ which: { nodeId: b.nodeId, buildNumber: b.buildNumber }, end: { outcome: 'FAILURE', happened: { type: 'buildFailed' }, error: error.message } })),
      );
    },
  };
}

/**
 * Phase records that arrive in the same turn of the event loop go to the database in one
 * statement: the batch's builds reach each step together, so a step costs one statement a batch.
 */
function coalescedPhases(db: Queryable) {
  let pending: Array<{ nodeId: string; buildNumber: number; phase: BuildStep }> = [];
  let flush: Promise<void> | undefined;
  return {
    enter(build: Build, phase: BuildStep): Promise<void> {
      pending.push({ nodeId: build.nodeId, buildNumber: build.buildNumber, phase });
      flush ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        const steps = pending;
        pending = [];
        flush = undefined;
        return setBuildPhases(db, steps);
      });
      return flush;
    },
  };
}
