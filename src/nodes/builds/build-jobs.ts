// Every job that carries out builds: a worker that runs builds runs both kinds, or a rollout's
// upgrades (a batch job of their own) would wait forever for a worker that knows them.
import type { JobDefinition } from '../../jobs/worker.ts';
import { buildJob, type BuildJobDeps } from './build-job.ts';
import { rolloutUpgradesJob } from '../rollout/upgrades-job.ts';

export function buildJobs(deps: BuildJobDeps): JobDefinition[] {
  return [buildJob(deps), rolloutUpgradesJob(deps)];
}
