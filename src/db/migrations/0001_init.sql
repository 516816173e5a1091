-- Accounts, tokens, the image release catalog, nodes with their builds, and durable jobs.
-- Written in SQL that PostgreSQL 15 and PGlite (PostgreSQL 18) both accept.

CREATE TABLE users (
  id text PRIMARY KEY,
  email text NOT NULL UNIQUE,
  plan text NOT NULL CHECK (plan IN ('starter', 'growth', 'scale', 'wallet')),
  password_hash text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_tokens (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL,
  -- SHA-256 of the token: tokens carry 256 random bits, so a fast hash is enough and lookups stay O(1).
  token_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  expires_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

CREATE TABLE image_versions (
  version text PRIMARY KEY,
  -- Release order; the latest image version is the highest.
  seq integer GENERATED ALWAYS AS IDENTITY UNIQUE,
  released_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE nodes (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name text NOT NULL,
  network text NOT NULL CHECK (network IN ('regtest', 'testnet')),
  status text NOT NULL CHECK (status IN ('STARTING', 'RUNNING', 'IN_PROGRESS', 'PAUSED', 'FAILED', 'DESTROYING', 'DESTROYED')),
  -- What the user asked for; the reconcile loop drives the runtime toward it.
  desired_state text NOT NULL CHECK (desired_state IN ('running', 'stopped', 'destroyed')),
  locked boolean NOT NULL DEFAULT true,
  initialized boolean NOT NULL DEFAULT false,
  image_version text NOT NULL REFERENCES image_versions (version),
  settings jsonb NOT NULL DEFAULT '{}',
  rest_port integer NOT NULL,
  peer_port integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  destroyed_at timestamptz
);
CREATE INDEX nodes_user ON nodes (user_id, created_at);
-- Ports are reused once a node is destroyed.
CREATE UNIQUE INDEX nodes_rest_port ON nodes (rest_port) WHERE destroyed_at IS NULL;
CREATE UNIQUE INDEX nodes_peer_port ON nodes (peer_port) WHERE destroyed_at IS NULL;

CREATE TABLE builds (
  node_id text NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
  build_number integer NOT NULL,
  action text NOT NULL CHECK (action IN ('create', 'start', 'stop', 'upgrade', 'destroy')),
  status text NOT NULL CHECK (status IN ('IN_PROGRESS', 'SUCCESS', 'FAILURE')),
  image_version text NOT NULL,
  previous_image_version text,
  error text,
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  PRIMARY KEY (node_id, build_number)
);
-- At most one build in progress per node, enforced by the database, not only by the service.
CREATE UNIQUE INDEX builds_one_in_progress ON builds (node_id) WHERE status = 'IN_PROGRESS';

CREATE TABLE jobs (
  id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL,
  payload jsonb NOT NULL,
  -- Jobs with the same key never run side by side (one build per node, one rollout per release).
  singleton_key text,
  state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL,
  run_at timestamptz NOT NULL DEFAULT now(),
  -- A claimed job belongs to its worker until the lease ends; a crashed worker's job is taken over.
  lease_until timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE UNIQUE INDEX jobs_singleton ON jobs (singleton_key) WHERE state IN ('queued', 'running');
CREATE INDEX jobs_due ON jobs (run_at) WHERE state IN ('queued', 'running');

CREATE TABLE idempotency_keys (
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  key text NOT NULL,
  request_hash text NOT NULL,
  response_status integer NOT NULL,
  response_body jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, key)
);
