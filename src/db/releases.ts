// The catalog of node image versions; the latest release is the one new nodes get.
import type { Queryable } from './database.ts';

export interface ReleaseRow {
  version: string;
  seq: number;
  released_at: Date;
}

export async function insertRelease(db: Queryable, version: string) {
  return (
    await db.query<ReleaseRow>(
      'INSERT INTO image_versions (version) VALUES ($1) ON CONFLICT (version) DO NOTHING RETURNING *',
      [version],
    )
  )[0];
}

export async function latestRelease(db: Queryable) {
  return (await db.query<ReleaseRow>('SELECT * FROM image_versions ORDER BY seq DESC LIMIT 1'))[0];
}

export async function listReleases(db: Queryable) {
  return db.query<ReleaseRow>('SELECT * FROM image_versions ORDER BY seq');
}
