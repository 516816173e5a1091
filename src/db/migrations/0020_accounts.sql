-- Accounts with members, and plans as data (issue #27).
--
-- An account owns what users used to own: nodes, tokens' reach, certificates, webhooks, backups
-- and usage. Its id is its owner's user id, always: every account that exists was made from a
-- user, so the columns that have named "the user" a resource belongs to (nodes.user_id,
-- backups.user_id, client_certificates.user_id, ...) and the `<user_id>` in every node URL keep
-- their values and from now on name the node's account. Nothing a client holds changes.
--
-- A user is a member of exactly one account, with a role. Tokens and web sessions stay the
-- member's own (api_tokens.user_id, web_sessions.user_id); they reach the account through the
-- membership, so removing a member ends them at once.

CREATE TABLE plans (
  name text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9-]{0,31}$'),
  -- NULL: unlimited.
  max_nodes integer CHECK (max_nodes >= 0),
  api_calls_per_month bigint CHECK (api_calls_per_month >= 0),
  max_users integer CHECK (max_users >= 1),
  auto_upgrade boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The original's published plans. Growth names no user count; "multiple users" is Scale's, so
-- Growth keeps Starter's one. Wallet is Scale under another name.
INSERT INTO plans (name, max_nodes, api_calls_per_month, max_users, auto_upgrade) VALUES
  ('starter', 1, 250000, 1, false),
  ('growth', 3, 1000000, 1, false),
  ('scale', NULL, NULL, NULL, true),
  ('wallet', NULL, NULL, NULL, true);

CREATE TABLE accounts (
  -- The owner's user id (see above).
  id text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  plan text NOT NULL REFERENCES plans (name),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX accounts_plan ON accounts (plan);

CREATE TABLE account_members (
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  -- One account per user.
  user_id text NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, user_id)
);

CREATE TABLE account_invitations (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('admin', 'developer', 'viewer')),
  -- SHA-256 of the one-time secret in the invitation link; the link itself is shown once.
  token_hash text NOT NULL UNIQUE,
  invited_by text REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX account_invitations_account ON account_invitations (account_id, created_at);

-- Every existing user becomes the owner of an account of their own, on the plan they had.
INSERT INTO accounts (id, plan, created_at) SELECT id, plan, created_at FROM users;
INSERT INTO account_members (account_id, user_id, role, created_at) SELECT id, id, 'owner', created_at FROM users;
ALTER TABLE users DROP COLUMN plan;

-- Who issued a client certificate: a removed member's certificates stop working. NULL for those
-- issued before accounts (their issuer is the account's owner, who cannot be removed).
ALTER TABLE client_certificates ADD COLUMN issued_by text REFERENCES users (id) ON DELETE CASCADE;
