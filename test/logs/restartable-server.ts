// A test server that can be stopped and started again on the same DATA_DIR and database, the way
// an operator restarts the service (startTestServer's servers live once).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/logger.ts';
import { startServer, type RunningServer } from '../../src/app.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { testConfig } from '../helpers/server.ts';

export async function startRestartableServer(env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-test-'));
  const database = await createTestDatabase();
  // Reconcile at its default pace, as this helper always ran; everything else as any test server.
  const config = await testConfig(dataDir, database.url, { RECONCILE_INTERVAL_MS: '5000', ...env });
  const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  let server: RunningServer | undefined = await startServer(config, log);
  return {
    config,
    server: () => server!,
    async restart() {
      await server?.stop();
      server = undefined;
      server = await startServer(config, log);
    },
    async stop() {
      await server?.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
