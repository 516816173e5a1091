-- Metered usage (issue #27): node time from the recorded status changes, API calls counted in
-- batches, and months snapshotted once they are closed (docs/USAGE.md).

-- Every change of a node's status, written by a trigger on nodes in the transaction that makes it:
-- every replica and every code path (API, reconcile loop, builds, the operator's CLI) records it,
-- and none can forget to. Node time is summed from these rows, so a restart or a crash of a
-- replica loses or doubles nothing. account_id is nodes.user_id (the account, migration 0020).
-- No foreign key to nodes: a destroyed node's row is purged after its retention, its usage stays.
CREATE TABLE node_status_changes (
  id bigserial PRIMARY KEY,
  node_id text NOT NULL,
  account_id text NOT NULL,
  status text NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now(),
  -- When the node's next change was recorded: the interval this status lasted is
  -- [changed_at, ended_at), or still open while NULL. Set by the trigger below, so that a month's
  -- time is read from rows, without ordering every node's changes to find each one's end.
  ended_at timestamptz
);
-- A node's history in order (the last change before a month, then the month's).
CREATE INDEX node_status_changes_node ON node_status_changes (node_id, changed_at, id);
-- An account's changes in a month (the reference reading, usage/node-time.ts's test).
CREATE INDEX node_status_changes_account ON node_status_changes (account_id, changed_at);
-- An account's billed intervals that overlap a month: ended after its start, or still open (GET /api/usage).
CREATE INDEX node_status_changes_billed ON node_status_changes (account_id, ended_at) WHERE status IN ('RUNNING', 'PAUSED');

-- A change ends the node's interval before it. Recorded changes arrive in order (the node's row
-- lock orders the transactions that change its status).
CREATE FUNCTION end_previous_node_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE node_status_changes SET ended_at = NEW.changed_at WHERE node_id = NEW.node_id AND ended_at IS NULL;
  RETURN NEW;
END $$;

CREATE TRIGGER node_status_changes_end_previous BEFORE INSERT ON node_status_changes
  FOR EACH ROW EXECUTE FUNCTION end_previous_node_status();

CREATE FUNCTION record_node_status_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.status IS DISTINCT FROM OLD.status THEN
    INSERT INTO node_status_changes (node_id, account_id, status) VALUES (NEW.id, NEW.user_id, NEW.status);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER nodes_record_status_change AFTER INSERT OR UPDATE OF status ON nodes
  FOR EACH ROW EXECUTE FUNCTION record_node_status_change();

-- The nodes that exist now, in the status they have now, from now: when their earlier changes
-- happened is not known (nothing recorded it), so no time before this migration is counted.
INSERT INTO node_status_changes (node_id, account_id, status)
  SELECT id, user_id, status FROM nodes WHERE destroyed_at IS NULL;

-- API calls per account, node ('' for calls about no node) and kind, per calendar month (UTC).
-- Replicas add their counts in batches (usage/api-call-meter.ts), never a write per request.
CREATE TABLE api_call_counts (
  account_id text NOT NULL,
  month date NOT NULL CHECK (extract(day FROM month) = 1),
  node_id text NOT NULL DEFAULT '',
  kind text NOT NULL CHECK (kind IN ('api', 'gateway')),
  calls bigint NOT NULL CHECK (calls >= 0),
  PRIMARY KEY (account_id, month, node_id, kind)
);

-- An account's month total, the one row every replica's batch adds to and reads back: its row
-- lock orders concurrent batches, so each replica reads an exact total (the quota's bound rests
-- on it, docs/USAGE.md).
CREATE TABLE api_call_totals (
  account_id text NOT NULL,
  month date NOT NULL CHECK (extract(day FROM month) = 1),
  calls bigint NOT NULL CHECK (calls >= 0),
  PRIMARY KEY (account_id, month)
);

-- Months whose figures are final: closed once, by one replica, some minutes after they ended
-- (every replica's counts flushed by then).
CREATE TABLE usage_months_closed (
  month date PRIMARY KEY CHECK (extract(day FROM month) = 1),
  closed_at timestamptz NOT NULL DEFAULT now()
);

-- A closed month's figures per account and node ('' for the API calls about no node), as they
-- were at closing; they never change afterwards. days: [[running, paused], ...] per day of the month.
CREATE TABLE usage_closed_months (
  month date NOT NULL REFERENCES usage_months_closed (month),
  account_id text NOT NULL,
  node_id text NOT NULL,
  node_name text,
  running_seconds bigint NOT NULL,
  paused_seconds bigint NOT NULL,
  api_calls bigint NOT NULL,
  gateway_calls bigint NOT NULL,
  days jsonb NOT NULL DEFAULT '[]',
  PRIMARY KEY (month, account_id, node_id)
);
