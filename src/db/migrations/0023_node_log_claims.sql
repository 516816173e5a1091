-- Node logs, collected once (issue #28). On Kubernetes each node's pod log is followed by exactly
-- one replica at a time: the holder of the node's claim, a lease per node. A holder renews its
-- claims well before they expire; another replica takes a claim over once it expired (the holder
-- died) or was released (it stopped, or handed the node to a replica with fewer).
--
-- `collected_through` is the kubelet's time of the last line stored in a segment (RFC 3339 with
-- nine fraction digits, so text order is time order). It only moves in the transaction that
-- records a segment, checked against the holder, so whoever takes the claim over resumes right
-- after the last stored line: what a dead holder had buffered but not stored is read again from
-- the kubelet, and nothing stored is stored twice.
CREATE TABLE node_log_claims (
  node_id text PRIMARY KEY REFERENCES nodes (id) ON DELETE CASCADE,
  holder text,
  expires_at timestamptz NOT NULL DEFAULT now(),
  collected_through text
);

-- Collected output, in segments kept in the blob store (area `node-logs`), oldest first by `seq`.
-- Lines are `<ISO time received> stdout <line>` as in the process runtime's files; `first_at` and
-- `last_at` bound a segment's times so an export of a range opens only the segments it needs.
-- No foreign key: a purged node's records stay until the segment sweep has deleted their blobs.
CREATE TABLE node_log_segments (
  node_id text NOT NULL,
  seq bigint NOT NULL,
  blob_key text NOT NULL,
  first_at timestamptz NOT NULL,
  last_at timestamptz NOT NULL,
  bytes bigint NOT NULL,
  lines integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (node_id, seq)
);
