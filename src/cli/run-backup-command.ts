// Runs a `backup ...` command: an API client, so it works the same whether the service runs here
// or elsewhere (--api-url), on any database.
import { AppError } from '../errors.ts';
import { apiClientSettings } from './api-client.ts';
import { backupCommands, type CliArgs } from './backup-commands.ts';
import type { CliConfig } from './settings.ts';

export async function runBackupCommand(config: { publicUrl: string; dataDir: string; cli: CliConfig }, command: string, args: CliArgs): Promise<object> {
  const run = backupCommands[command];
  if (!run) throw new AppError('invalid_request', `"${command}" needs one of: ${Object.keys(backupCommands).map((c) => c.slice('backup '.length)).join(', ')}`);
  return run(apiClientSettings(args.options, config), args);
}
