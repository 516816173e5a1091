// Configuration of the unlock seal (secrets/unlock-seal.ts), read by config.ts with the rest of the
// environment.
import { join, resolve } from 'node:path';
import { text } from '../env/formats.ts';
import { readEnv, variable, type Env } from '../env/variable.ts';

export interface UnlockSealConfig {
  /** The keyring that seals auto-unlock passwords; never in the database. */
  keyFile: string;
  /**
   * True when the operator named the file: it must then exist and be a keyring (a typo must not
   * quietly create a new key beside the one the passwords were sealed with). The default path is
   * created at the first start.
   */
  keyFileGiven: boolean;
}

export const UNLOCK_SEAL_VARIABLES = {
  // Outside the database by design: a leaked database alone must not reveal the passwords.
  keyFile: variable('UNLOCK_SEAL_KEY_FILE', text(), {
    unset: '`<DATA_DIR>/unlock-seal-keys.json`, created (0600) at first start',
    doc: 'the AES-256 key-encryption keyring that seals the passwords of nodes with automatic unlock (never stored in the database); a file you name must exist: a keyring or one base64 key (share one file between replicas)',
  }),
};

export function readUnlockSealConfig(env: Env, problems: string[], ctx: { dataDir: string }): UnlockSealConfig {
  const values = readEnv(UNLOCK_SEAL_VARIABLES, env, problems);
  return {
    keyFile: resolve(values.keyFile ?? join(ctx.dataDir, 'unlock-seal-keys.json')),
    keyFileGiven: values.keyFile !== undefined,
  };
}
