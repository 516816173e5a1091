-- Webhook deliveries: a claim rewrites its row in place.
--
-- The indexes that find unfinished deliveries were partial on the state column, which every claim
-- and every outcome changes. A change to a column an index depends on (its key or its predicate)
-- makes PostgreSQL write a new row version with a new entry in every index of the table (five of
-- them until now). A delivery is unfinished exactly when it has no finished_at (the constraint
-- below holds the two together), so the index is now partial on finished_at. A claim
-- (pending -> delivering) leaves finished_at alone and becomes a heap-only update, with no new
-- index entries, when its page has room; the fill factor keeps some.
--
-- During a rolling update the previous version keeps working: every write it makes already keeps
-- finished_at and state together (the constraint cannot refuse it), and its claim, which still
-- filters on state, reads the same rows, without a partial index to match, so more slowly until
-- its replicas are replaced.

ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_finished_when_done
  CHECK ((finished_at IS NULL) = (state IN ('pending', 'delivering')));

DROP INDEX webhook_deliveries_unfinished;
-- Claiming: the oldest unfinished delivery of each node, found by skipping from node to node.
CREATE INDEX webhook_deliveries_unfinished ON webhook_deliveries (node_id, id) WHERE finished_at IS NULL;
-- Due work in time order was read from this index before claims walked the nodes' queues; nothing
-- reads it now, and every delivery paid for its entries.
DROP INDEX webhook_deliveries_due;

-- Room on each page for the row versions of claims (applies to pages written from now on).
ALTER TABLE webhook_deliveries SET (fillfactor = 70);
