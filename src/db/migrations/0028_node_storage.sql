-- A node's storage use as last measured (nodes/storage-meter.ts): what its files take, and the
-- size and free space of the volume they are on. Columns of the node, not a table of their own,
-- so every read of a node carries them without a join; all four are set together or none is.
ALTER TABLE nodes
  ADD COLUMN storage_used_bytes bigint CHECK (storage_used_bytes >= 0),
  ADD COLUMN storage_capacity_bytes bigint CHECK (storage_capacity_bytes >= 0),
  ADD COLUMN storage_available_bytes bigint CHECK (storage_available_bytes >= 0),
  ADD COLUMN storage_measured_at timestamptz;

ALTER TABLE nodes ADD CONSTRAINT nodes_storage_measured_together CHECK (
  (storage_measured_at IS NULL) = (storage_used_bytes IS NULL)
  AND (storage_measured_at IS NULL) = (storage_capacity_bytes IS NULL)
  AND (storage_measured_at IS NULL) = (storage_available_bytes IS NULL)
);
