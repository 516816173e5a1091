// RUNTIME=process serves a PostgreSQL database from one replica only: a second is refused with a
// message that says why and what to do, and starts once the first has stopped (it handed the
// lease back). PGlite needs no such guard: one process opens it at a time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../../src/app.ts';
import { createLogger } from '../../src/logger.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { testConfig } from '../helpers/server.ts';

const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

onPostgres('RUNTIME=process on a shared PostgreSQL', () => {
  const dirs = [mkdtempSync(join(tmpdir(), 'rln-sole-a-')), mkdtempSync(join(tmpdir(), 'rln-sole-b-'))];
  let drop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await drop?.();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('refuses a second replica while the first serves, and takes over once it stopped', async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const log = createLogger('silent');
    const first = await startServer(await testConfig(dirs[0]!, database.url), log);
    try {
      await expect(startServer(await testConfig(dirs[1]!, database.url), log)).rejects.toThrow(
        /RUNTIME=process runs the nodes as child processes of a single replica, and another one \(.+\) serves this database\. .*RUNTIME=kubernetes/,
      );
    } finally {
      await first.stop();
    }
    const second = await startServer(await testConfig(dirs[1]!, database.url), log);
    await second.stop();
  }, 60_000);
});
