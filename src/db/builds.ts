// Builds: the numbered history of everything the control plane did to a node. Rows are mapped to
// the domain Build (domain/nodes.ts) here; the row never leaves db/.
import type { Queryable } from './database.ts';
import type { Build, BuildAction, BuildStatus, BuildStep } from '../domain/nodes.ts';

export interface BuildRow {
  node_id: string;
  build_number: number;
  action: BuildAction;
  status: BuildStatus;
  image_version: string;
  previous_image_version: string | null;
  error: string | null;
  /** The step a build in progress is on (build-job.ts); null before the first, and kept once finished. */
  phase: BuildStep | null;
  started_at: Date;
  finished_at: Date | null;
}

export function buildFromRow(r: BuildRow): Build {
  return {
    nodeId: r.node_id,
    buildNumber: r.build_number,
    action: r.action,
    status: r.status,
    imageVersion: r.image_version,
    previousImageVersion: r.previous_image_version,
    error: r.error,
    phase: r.phase,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

const queryBuilds = async (db: Queryable, sql: string, params: unknown[]) => (await db.query<BuildRow>(sql, params)).map(buildFromRow);

export interface NewBuild {
  nodeId: string;
  action: BuildAction;
  imageVersion: string;
  previousImageVersion?: string | null;
}

export async function insertBuild(db: Queryable, b: NewBuild) {
  return (await insertBuilds(db, [b]))[0]!;
}

/** Numbers and records one new build per node (distinct nodes), in one statement. */
export async function insertBuilds(db: Queryable, builds: NewBuild[]) {
  if (builds.length === 0) return [];
  const rows = await queryBuilds(
    db,
    `INSERT INTO builds (node_id, build_number, action, status, image_version, previous_image_version)
     SELECT b.node_id, (SELECT coalesce(max(x.build_number), 0) + 1 FROM builds x WHERE x.node_id = b.node_id),
            b.action, 'IN_PROGRESS', b.image_version, b.previous_image_version
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS b(node_id, action, image_version, previous_image_version)
     RETURNING *`,
    [
      builds.map((b) => b.nodeId),
      builds.map((b) => b.action),
      builds.map((b) => b.imageVersion),
      builds.map((b) => b.previousImageVersion ?? null),
    ],
  );
  const byNode = new Map(rows.map((r) => [r.nodeId, r]));
  return builds.map((b) => byNode.get(b.nodeId)!);
}

export async function findBuild(db: Queryable, nodeId: string, buildNumber: number) {
  return (
    await queryBuilds(db, 'SELECT * FROM builds WHERE node_id = $1 AND build_number = $2', [nodeId, buildNumber])
  )[0];
}

export async function findBuildInProgress(db: Queryable, nodeId: string) {
  return (await queryBuilds(db, `SELECT * FROM builds WHERE node_id = $1 AND status = 'IN_PROGRESS'`, [nodeId]))[0];
}

export async function finishBuild(db: Queryable, nodeId: string, buildNumber: number, status: 'SUCCESS' | 'FAILURE', error?: string) {
  return (
    await queryBuilds(
      db,
      `UPDATE builds SET status = $3, error = $4, finished_at = now()
       WHERE node_id = $1 AND build_number = $2 AND status = 'IN_PROGRESS' RETURNING *`,
      [nodeId, buildNumber, status, error ?? null],
    )
  )[0];
}

/** One key per build, for maps of builds taken from several nodes. */
export const buildKey = (b: Pick<Build, 'nodeId' | 'buildNumber'>) => `${b.nodeId}:${b.buildNumber}`;

/**
 * Closes many builds in one statement, each with its own status and error. Returns those that were
 * still in progress (a build closed by an earlier attempt is left as it is and not returned).
 */
export async function finishBuilds(
  db: Queryable,
  ends: Array<{ nodeId: string; buildNumber: number; status: 'SUCCESS' | 'FAILURE'; error?: string }>,
) {
  if (ends.length === 0) return [];
  return queryBuilds(
    db,
    `UPDATE builds b SET status = e.status, error = e.error, finished_at = now()
     FROM unnest($1::text[], $2::int[], $3::text[], $4::text[]) AS e(node_id, build_number, status, error)
     WHERE b.node_id = e.node_id AND b.build_number = e.build_number AND b.status = 'IN_PROGRESS'
     RETURNING b.*`,
    [ends.map((e) => e.nodeId), ends.map((e) => e.buildNumber), ends.map((e) => e.status), ends.map((e) => e.error ?? null)],
  );
}

/** Builds in progress among these, in one query (a batch job looks up what is left to do). */
export async function findOpenBuilds(db: Queryable, which: Array<{ nodeId: string; buildNumber: number }>) {
  if (which.length === 0) return [];
  return queryBuilds(
    db,
    `SELECT b.* FROM builds b JOIN unnest($1::text[], $2::int[]) AS w(node_id, build_number)
       ON b.node_id = w.node_id AND b.build_number = w.build_number
     WHERE b.status = 'IN_PROGRESS'`,
    [which.map((w) => w.nodeId), which.map((w) => w.buildNumber)],
  );
}

/** Records the step many builds in progress moved to, each its own, in one statement. */
export async function setBuildPhases(db: Queryable, steps: Array<{ nodeId: string; buildNumber: number; phase: BuildStep }>) {
  if (steps.length === 0) return;
  await db.query(
    `UPDATE builds b SET phase = s.phase
     FROM unnest($1::text[], $2::int[], $3::text[]) AS s(node_id, build_number, phase)
     WHERE b.node_id = s.node_id AND b.build_number = s.build_number AND b.status = 'IN_PROGRESS'`,
    [steps.map((s) => s.nodeId), steps.map((s) => s.buildNumber), steps.map((s) => s.phase)],
  );
}

/** Records the step a build in progress moved to; a finished build is left as it is. */
export async function setBuildPhase(db: Queryable, nodeId: string, buildNumber: number, phase: BuildStep) {
  await db.query(`UPDATE builds SET phase = $3 WHERE node_id = $1 AND build_number = $2 AND status = 'IN_PROGRESS'`, [nodeId, buildNumber, phase]);
}

/** Builds of many nodes in one query, grouped by node, oldest first. */
export async function buildsByNode(db: Queryable, nodeIds: string[]): Promise<Map<string, Build[]>> {
  const byNode = new Map<string, Build[]>(nodeIds.map((id) => [id, []]));
  if (nodeIds.length === 0) return byNode;
  const rows = await queryBuilds(db, 'SELECT * FROM builds WHERE node_id = ANY($1) ORDER BY node_id, build_number', [nodeIds]);
  for (const build of rows) byNode.get(build.nodeId)?.push(build);
  return byNode;
}
