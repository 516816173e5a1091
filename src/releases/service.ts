// The image release catalog. Publishing a version makes it the latest: new nodes get it, and
// existing nodes see an upgrade available.
import type { Database } from '../db/database.ts';
import { insertRelease, latestRelease, listReleases } from '../db/releases.ts';
import { AppError } from '../errors.ts';

// Image versions are RLN commit ids or release tags: keep them safe to put in paths and commands.
export const VERSION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class ReleaseService {
  constructor(private readonly db: Database) {}

  async publish(version: string) {
    if (!VERSION_PATTERN.test(version)) {
      throw new AppError('invalid_request', 'a version is 1-64 characters of letters, digits, ".", "_" or "-", starting with a letter or digit');
    }
    const row = await insertRelease(this.db, version);
    if (!row) throw new AppError('release_exists', `version ${version} was already published`);
    return { version: row.version, releasedAt: row.released_at.toISOString(), latest: true };
  }

  async list() {
    const rows = await listReleases(this.db);
    const latest = rows.at(-1)?.version;
    return rows.map((r) => ({ version: r.version, releasedAt: r.released_at.toISOString(), latest: r.version === latest }));
  }

  /** Seeds the catalog with its first version on the very first start. */
  async seed(version: string) {
    if (!(await latestRelease(this.db))) await insertRelease(this.db, version);
  }
}
