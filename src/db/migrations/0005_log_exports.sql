-- Log export tasks: one row per POST /api/nodes/{id}/logs. The archive parts live in the blob
-- store under <node_id>/<id>/; this row says which, and whether the export finished.

CREATE TABLE log_exports (
  id text PRIMARY KEY,
  node_id text NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
  -- Kept beside node_id so "another user's task" is answered without a join, like a missing one.
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('IN_PROGRESS', 'SUCCEEDED', 'FAILED')),
  -- The requested time range of daemon output; NULL means unbounded on that side.
  range_from timestamptz,
  range_to timestamptz,
  -- [{key, bytes}] in order: each part is one gzip file, one download URL.
  parts jsonb NOT NULL DEFAULT '[]',
  -- Uncompressed bytes exported; for operators and the benchmark.
  input_bytes bigint,
  error_code text,
  error_message text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX log_exports_node ON log_exports (node_id, created_at);
CREATE INDEX log_exports_created ON log_exports (created_at);
-- One export at a time per node (a second one answers 409), enforced by the database too.
CREATE UNIQUE INDEX log_exports_one_in_progress ON log_exports (node_id) WHERE status = 'IN_PROGRESS';
