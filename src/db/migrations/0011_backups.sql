-- Node backups: one row per backup a user asked for (POST /api/nodes/{id}/backups) or uploaded to
-- restore from (POST /api/backups/uploads). The encrypted file lives in the backup blob store under
-- blob_key; the password that encrypts it is never stored.

CREATE TABLE backups (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- The node backed up, NULL for an upload. Not a foreign key: a backup outlives its node (the
  -- point of it is to restore the wallet elsewhere), until backup retention removes it.
  node_id text,
  origin text NOT NULL CHECK (origin IN ('node', 'upload')),
  status text NOT NULL CHECK (status IN ('IN_PROGRESS', 'SUCCEEDED', 'FAILED')),
  -- The node's network and image version when it was backed up (NULL for an upload).
  network text CHECK (network IN ('regtest', 'testnet')),
  image_version text,
  -- Whether the node was unlocked when the backup began: it is unlocked again afterwards.
  was_unlocked boolean NOT NULL DEFAULT false,
  -- The replica running the backup and when it last said it still was: the password is held only in
  -- that replica's memory, so a backup whose runner went silent is failed by the janitor.
  runner text,
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  blob_key text,
  size_bytes bigint,
  sha256 text,
  error_code text,
  error_message text,
  -- Set when the node could not be unlocked again after the backup (it was unlocked before).
  unlock_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX backups_node ON backups (node_id, created_at);
CREATE INDEX backups_user ON backups (user_id, created_at);
CREATE INDEX backups_in_progress ON backups (heartbeat_at) WHERE status = 'IN_PROGRESS';
-- One backup at a time per node (a second one answers 409), enforced by the database too.
CREATE UNIQUE INDEX backups_one_in_progress ON backups (node_id) WHERE status = 'IN_PROGRESS' AND node_id IS NOT NULL;

-- A node created from a backup (POST /api/nodes with restore): its create build places the file in
-- the node's storage and calls the daemon's /restore. The password is needed by that build, which
-- may run on any replica and after a restart, so it is kept sealed (AES-256-GCM under the key in
-- UNLOCK_SEAL_KEY_FILE, never in the database) until the restore ends, then erased.
CREATE TABLE node_restores (
  node_id text PRIMARY KEY REFERENCES nodes (id) ON DELETE CASCADE,
  backup_id text NOT NULL,
  sealed_password text,
  status text NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
