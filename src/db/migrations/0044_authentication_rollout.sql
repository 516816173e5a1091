-- Turning RLN's authentication on for nodes whose daemon was started before it (issue #40, point 5):
-- such a node runs with --disable-authentication until its daemon restarts. The operator's
-- `rln-cloud authentication rollout` restarts them a few at a time with a failure budget, like a
-- release's rollout (nodes/rollout/authentication-rollout.ts), through a `restart` build each.
--
-- Rolling update: a new table and a relaxed constraint. The previous version never writes
-- `restart`; a build of it that it reads is an action it does not carry out (only the job that
-- enqueued it does, and that job is new).
ALTER TABLE builds DROP CONSTRAINT builds_action_check;
ALTER TABLE builds ADD CONSTRAINT builds_action_check
  CHECK (action IN ('create', 'start', 'stop', 'upgrade', 'destroy', 'recover', 'restart'));

-- One rollout at a time (id 1): a new one replaces a completed one, its nodes enrolled afresh.
CREATE TABLE authentication_rollout (
  id integer PRIMARY KEY CHECK (id = 1),
  state text NOT NULL CHECK (state IN ('running', 'paused', 'completed')),
  concurrency integer NOT NULL CHECK (concurrency > 0),
  -- The rollout pauses once more restarts than this have failed.
  failure_budget integer NOT NULL CHECK (failure_budget >= 0),
  paused_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE authentication_rollout_nodes (
  node_id text PRIMARY KEY REFERENCES nodes (id) ON DELETE CASCADE,
  -- pending: waiting for a slot; restarting: its build runs; succeeded / failed: the build ended;
  -- skipped: nothing to restart when its turn came (not running: its next start has authentication).
  state text NOT NULL CHECK (state IN ('pending', 'restarting', 'succeeded', 'failed', 'skipped')),
  build_number integer,
  error text,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX authentication_rollout_nodes_state ON authentication_rollout_nodes (state);
