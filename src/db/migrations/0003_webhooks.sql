-- Webhook deliveries: one row per (event, attempt series), fed from node_events, with every
-- attempt recorded.

-- Set once an event was turned into a delivery (or found to have no webhook URL to go to), so
-- feeding is exactly-once and survives restarts; the partial index keeps finding new events cheap.
ALTER TABLE node_events ADD COLUMN webhook_fanned_out_at timestamptz;
CREATE INDEX node_events_webhook_pending ON node_events (id) WHERE webhook_fanned_out_at IS NULL;

CREATE TABLE webhook_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- Public id (the API); the webhook-id header is the event's id, stable across retries.
  delivery_id text NOT NULL UNIQUE DEFAULT ('dlv_' || replace(gen_random_uuid()::text, '-', '')),
  event_id bigint NOT NULL REFERENCES node_events (id) ON DELETE CASCADE,
  node_id text NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
  -- The node's webhook URL when the delivery was created; attempts go to the URL current then.
  url text NOT NULL,
  -- pending: waiting for its turn or its next attempt; delivering: an attempt is under way;
  -- succeeded / failed: finished; cancelled: the node no longer has a webhook URL, or it answered 410.
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivering', 'succeeded', 'failed', 'cancelled')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- A claimed delivery belongs to one worker until the lease ends (a crashed worker's is taken over);
  -- the token makes a late worker's write after a takeover a no-op.
  lease_until timestamptz,
  lease_token text,
  last_error text,
  redelivery_of bigint REFERENCES webhook_deliveries (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX webhook_deliveries_node ON webhook_deliveries (node_id, id);
-- Claiming: due work in time order, and "is there an older unfinished delivery for this node".
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE state IN ('pending', 'delivering');
CREATE INDEX webhook_deliveries_unfinished ON webhook_deliveries (node_id, id) WHERE state IN ('pending', 'delivering');

CREATE TABLE webhook_attempts (
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  url text NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  -- The HTTP status of the answer, or null when there was none (refused, unreachable, timed out).
  status_code integer,
  remote_address text,
  error text,
  PRIMARY KEY (delivery_id, attempt)
);
