// The unlock seal of a process (secrets/unlock-seal.ts), loaded from UNLOCK_SEAL_KEY_FILE, and the
// kinds of sealed values a key rotation re-seals. A new use of the seal adds its store here.
import { ConfigError, type Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { AUTO_UNLOCK_PASSWORDS } from '../nodes/unlock/auto-unlock.ts';
import { RESTORE_PASSWORDS } from '../backups/restore-into-node.ts';
import { NODE_ROOT_KEYS } from '../secrets/node-root-keys.ts';
import { NODE_TOKENS } from '../nodes/tokens/node-tokens.ts';
import { loadUnlockSeal, SealKeyFileError, type UnlockSeal } from '../secrets/unlock-seal.ts';
import { VSS_URL_CREDENTIALS } from '../vss/node-urls.ts';
import type { SealedValueStore, UnlockSealKeys } from '../secrets/unlock-seal-keys.ts';

export const SEALED_VALUE_STORES: SealedValueStore[] = [AUTO_UNLOCK_PASSWORDS, RESTORE_PASSWORDS, VSS_URL_CREDENTIALS, NODE_ROOT_KEYS, NODE_TOKENS];

/**
 * A file the operator named must exist and be a keyring; the default one is created (0600) at the
 * first start. Either way a file that cannot be read stops the start with a message naming it.
 */
export function loadConfiguredUnlockSeal(config: Pick<Config, 'unlockSeal'>): UnlockSeal {
  const { keyFile, keyFileGiven } = config.unlockSeal;
  try {
    return loadUnlockSeal(keyFile, { createIfMissing: !keyFileGiven });
  } catch (err) {
    if (!(err instanceof SealKeyFileError)) throw err;
    const fix = keyFileGiven
      ? 'point UNLOCK_SEAL_KEY_FILE at the keyring the passwords were sealed with, or unset it to use one in DATA_DIR'
      : 'restore the file from a backup, or move it away to start with a new key (sealed passwords then turn automatic unlock off)';
    throw new ConfigError([`UNLOCK_SEAL_KEY_FILE: ${err.message}; ${fix}`]);
  }
}

/** Sealed values the key file cannot open are turned off at their next use: say so at start, before users notice. */
export async function warnAboutUnknownSealKeys(keys: UnlockSealKeys, keyFile: string, log: Logger) {
  const { count, keyIds } = await keys.countUnknownKeys();
  if (count === 0) return;
  log.error(
    { count, keyIds, keyFile },
    'sealed passwords or node root keys in the database name keys the unlock seal key file does not hold: their nodes lose automatic unlock at their next start, ' +
      'and the service cannot authenticate to nodes whose root key it cannot open (docs/NODE-ACCESS.md). ' +
      'If the file was replaced by mistake, restore the one they were sealed with (UNLOCK_SEAL_KEY_FILE) and restart.',
  );
}
