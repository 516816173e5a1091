-- Node events (the webhook outbox) and release rollouts.

-- Every change worth telling a user about, written in the same transaction as the change itself.
-- Webhook delivery reads from here; nothing is lost when the service dies between the change and
-- the delivery.
CREATE TABLE node_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- Stable, public id of the event (the webhook-id header).
  event_id text NOT NULL UNIQUE,
  node_id text NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  event_type text NOT NULL,
  -- The envelope exactly as delivered: {eventType, eventTimestamp, nodeId, details}.
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX node_events_node ON node_events (node_id, id);

-- One rollout per published release: upgrades every node of the plans that upgrade automatically.
CREATE TABLE rollouts (
  version text PRIMARY KEY REFERENCES image_versions (version),
  state text NOT NULL CHECK (state IN ('running', 'paused', 'completed')),
  concurrency integer NOT NULL CHECK (concurrency > 0),
  -- The rollout pauses once this many upgrades have failed.
  failure_budget integer NOT NULL CHECK (failure_budget >= 0),
  paused_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE rollout_nodes (
  version text NOT NULL REFERENCES rollouts (version) ON DELETE CASCADE,
  node_id text NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
  -- pending: waiting for a slot; upgrading: its build runs; deferred: PAUSED, upgraded on next start;
  -- succeeded / failed: the build finished; skipped: nothing to do when its turn came.
  state text NOT NULL CHECK (state IN ('pending', 'upgrading', 'deferred', 'succeeded', 'failed', 'skipped')),
  build_number integer,
  error text,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (version, node_id)
);
CREATE INDEX rollout_nodes_state ON rollout_nodes (version, state);
