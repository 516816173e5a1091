// Running an operator command from the CLI: through the running server's admin channel when a
// server holds the embedded database, otherwise against the database directly.
import type { Config } from '../config.ts';
import { openDatabase } from '../db/open.ts';
import { createLogger } from '../logger.ts';
import { migrate } from '../db/migrate.ts';
import { acquireDataDirLock } from '../db/data-dir-lock.ts';
import { buildOperatorServices } from '../composition/services.ts';
import { loadConfiguredUnlockSeal } from '../composition/unlock-seal.ts';
import { AppError } from '../errors.ts';
import { loadExistingCertificateAuthority } from '../pki/ca-store.ts';
import { operatorCommands, type OperatorArgs } from './commands.ts';
import { callAdminChannel, findAdminChannel } from './admin-channel.ts';

export { operatorCommands } from './commands.ts';
export { printHuman } from '../cli/output.ts';
export { watchRollout } from './rollout-progress.ts';

/**
 * Runs an operator command where the database is: through the running server's admin channel
 * when a server holds the embedded database, otherwise by opening the database here.
 */
export async function runOperator(config: Config, command: string, args: OperatorArgs): Promise<object> {
  if (!config.databaseUrl) {
    for (;;) {
      const lock = acquireDataDirLock(config.dataDir, 'cli');
      if (lock.acquired) {
        try {
          return await runDirect(config, command, args);
        } finally {
          lock.release();
        }
      }
      if (lock.holder.role === 'server') {
        if (command === 'migrate') return { migrated: [], note: 'the running server applied migrations at start' };
        return callAdminChannel(await findAdminChannel(config.dataDir, lock.holder.pid), command, args);
      }
      await new Promise((r) => setTimeout(r, 200)); // another CLI command holds it for a moment
    }
  }
  return runDirect(config, command, args);
}

async function runDirect(config: Config, command: string, args: OperatorArgs): Promise<object> {
  const db = await openDatabase(config);
  try {
    const migrated = await migrate(db);
    if (command === 'migrate') return { migrated };
    // Issuing needs the CA the serving processes use; nothing else here does.
    const ca = command === 'cert issue' ? await loadExistingCertificateAuthority(config) : undefined;
    if (command === 'cert issue' && !ca) {
      throw new AppError('service_unavailable', 'no certificate authority here: start the service once (it creates one in DATA_DIR/pki), or set CA_CERT_FILE and CA_KEY_FILE as the service has them');
    }
    // Only the seal's own commands touch its key file (the default one would be created here).
    const unlockSeal = command.startsWith('unlock-seal-key ') ? loadConfiguredUnlockSeal(config) : undefined;
    // On stderr: stdout is the command's answer (one JSON object with --json).
    const ctx = buildOperatorServices(db, config, createLogger(config.logLevel, 2, config.logFormat), ca, unlockSeal);
    await ctx.releases.seed(config.initialImageVersion);
    return await operatorCommands[command]!(ctx, args);
  } finally {
    await db.close();
  }
}

