// What a test that runs a real dispatcher starts from, fresh for each test: a migrated database, a
// loopback receiver, and a directory for the signing keys; all removed after the test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openMigratedTestDb } from '../helpers/database.ts';
import { startReceiver, type Receiver } from './receiver.ts';

export interface DispatcherFixture {
  db: Database;
  receiver: Receiver;
  /** Where the test's keyring file goes. */
  dir: string;
}

/** Registers the set-up and clean-up; the returned object holds the current test's parts. */
export function useDispatcherFixture(dirPrefix: string): DispatcherFixture {
  const fixture = {} as DispatcherFixture;
  let closeDb: () => Promise<void>;
  beforeEach(async () => {
    ({ db: fixture.db, close: closeDb } = await openMigratedTestDb());
    fixture.receiver = await startReceiver();
    fixture.dir = mkdtempSync(join(tmpdir(), dirPrefix));
  });
  afterEach(async () => {
    await closeDb();
    await fixture.receiver.close();
    rmSync(fixture.dir, { recursive: true, force: true });
  });
  return fixture;
}
