-- Node events as an API: a timeline per node and a stream per user, read in commit-safe order.

-- The transaction that recorded the event. Identity values are handed out when rows are inserted,
-- not when they commit, so a reader walking ids would skip an event whose transaction commits after
-- a later id was read. Readers instead walk (tx_id, id) and stop below the oldest transaction still
-- running (pg_snapshot_xmin): nothing can appear behind what they have read. Existing rows get the
-- migration's own id (one fast default, no rewrite) and keep their order by id. Writers need no
-- change: the default fills it, also for a replica still on the previous version.
ALTER TABLE node_events ADD COLUMN tx_id xid8 NOT NULL DEFAULT pg_current_xact_id();

-- The stream's poller (every user), a stream resuming (one user) and a node's timeline.
CREATE INDEX node_events_feed ON node_events (tx_id, id);
CREATE INDEX node_events_user_feed ON node_events (user_id, tx_id, id);
CREATE INDEX node_events_node_feed ON node_events (node_id, tx_id, id);
