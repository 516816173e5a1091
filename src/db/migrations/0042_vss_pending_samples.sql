-- Continuous state seen from the daemon (issue #43, point 4): the last count of state writes a
-- node's daemon had made locally and not yet to VSS (`pending_kv_writes` of its /vssbackupinfo),
-- sampled by the service (nodes/upkeep/vss-pending-meter.ts and every read of the node's
-- continuous state), for the rlncloud_vss_nodes_with_pending_writes gauge and its alert. A table
-- of its own: it changes every minute per node, and the node's row is read everywhere.
CREATE TABLE vss_pending_samples (
  node_id text PRIMARY KEY REFERENCES nodes (id) ON DELETE CASCADE,
  pending_writes integer NOT NULL,
  sampled_at timestamptz NOT NULL DEFAULT now()
);
