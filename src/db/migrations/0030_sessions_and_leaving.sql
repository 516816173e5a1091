-- Sessions a person can see and end, and accounts that outlive the user who created them (issue #45).

-- A session's public id (the id_hash must not be handed out: it is what the cookie is looked up
-- by), and the device and address it was opened from, for the person's list of their sessions.
ALTER TABLE web_sessions ADD COLUMN id text;
UPDATE web_sessions SET id = substr(md5(id_hash), 1, 32);
ALTER TABLE web_sessions ALTER COLUMN id SET NOT NULL;
CREATE UNIQUE INDEX web_sessions_id ON web_sessions (id);
ALTER TABLE web_sessions ADD COLUMN user_agent text;
ALTER TABLE web_sessions ADD COLUMN address text;

-- An account's id is the id of the user who created it, and stays so after an ownership transfer
-- (every node URL carries it). That user may then leave or be removed like any member: the
-- account, and what it owns, must not go with their user row. The columns that name a resource's
-- account (nodes.user_id, ...) now reference the account instead of the user.
ALTER TABLE accounts DROP CONSTRAINT accounts_id_fkey;
ALTER TABLE nodes DROP CONSTRAINT nodes_user_id_fkey;
ALTER TABLE nodes ADD CONSTRAINT nodes_account_fkey FOREIGN KEY (user_id) REFERENCES accounts (id) ON DELETE CASCADE;
ALTER TABLE node_events DROP CONSTRAINT node_events_user_id_fkey;
ALTER TABLE node_events ADD CONSTRAINT node_events_account_fkey FOREIGN KEY (user_id) REFERENCES accounts (id) ON DELETE CASCADE;
ALTER TABLE client_certificates DROP CONSTRAINT client_certificates_user_id_fkey;
ALTER TABLE client_certificates ADD CONSTRAINT client_certificates_account_fkey FOREIGN KEY (user_id) REFERENCES accounts (id) ON DELETE CASCADE;
ALTER TABLE log_exports DROP CONSTRAINT log_exports_user_id_fkey;
ALTER TABLE log_exports ADD CONSTRAINT log_exports_account_fkey FOREIGN KEY (user_id) REFERENCES accounts (id) ON DELETE CASCADE;
ALTER TABLE backups DROP CONSTRAINT backups_user_id_fkey;
ALTER TABLE backups ADD CONSTRAINT backups_account_fkey FOREIGN KEY (user_id) REFERENCES accounts (id) ON DELETE CASCADE;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_user_id_fkey;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_account_fkey FOREIGN KEY (user_id) REFERENCES accounts (id) ON DELETE CASCADE;
-- The audit trail stays for the operator after the account is deleted (docs/ACCOUNTS.md).
ALTER TABLE audit_events DROP CONSTRAINT audit_events_user_id_fkey;

-- An owner's offer of the account to one of its admins, until the admin accepts, the owner
-- withdraws it, or it expires. One offer per account at a time; it goes with the admin's user.
CREATE TABLE account_transfers (
  account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  to_user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  offered_by text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);

-- An account its owner deleted while its nodes were still being destroyed: its people and their
-- data are gone already; the row (and the nodes' records) go once every node is DESTROYED.
ALTER TABLE accounts ADD COLUMN deleted_at timestamptz;
CREATE INDEX accounts_deleted ON accounts (deleted_at) WHERE deleted_at IS NOT NULL;
