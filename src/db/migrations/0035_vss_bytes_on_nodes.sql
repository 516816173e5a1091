-- VSS (issue #42): the bytes a node's VSS store holds, as last measured (vss/vss-janitor.ts, every
-- few minutes), kept on the node like its storage use: the node's answer, its page and the
-- rlncloud_vss_stores_over_soft_limit gauge read it without summing the store's rows each time.
-- NULL until the node has a store and it was measured once.
ALTER TABLE nodes ADD COLUMN vss_bytes bigint;
ALTER TABLE nodes ADD COLUMN vss_measured_at timestamptz;
