-- Automatic unlock: the node's wallet password, sealed with AES-256-GCM under a key that is not in
-- the database (UNLOCK_SEAL_KEY_FILE; secrets/unlock-seal.ts). NULL: automatic unlock is off.
-- The service opens it only to unlock the node after a daemon start; the API never shows it.
ALTER TABLE nodes ADD COLUMN auto_unlock_sealed text;
