-- The owner and admins are emailed when a node's storage is lost (NODE_STORAGE_LOST): its daemon
-- is stopped and only they can bring it back (recover, then the wallet's mnemonic). A kind of its
-- own, turned off on its own, like the others of 0036.
--
-- Rolling update: the previous version's trigger function is replaced by one that queues one more
-- event type; a previous replica that runs such a job finds an event it does not know and sends the
-- node-failed notice for it (its only other branch), which says the node is down: acceptable for
-- the minutes a rolling update lasts. Its CHECK is only widened.
ALTER TABLE notification_opt_outs DROP CONSTRAINT notification_opt_outs_kind_check;
ALTER TABLE notification_opt_outs ADD CONSTRAINT notification_opt_outs_kind_check
  CHECK (kind IN ('node-failed', 'node-storage-lost', 'backup-failed', 'api-calls-80', 'api-calls-100'));

CREATE OR REPLACE FUNCTION queue_node_events_for_notifications() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO jobs (kind, payload, singleton_key, max_attempts)
  SELECT 'notification.node-event', jsonb_build_object('v', 1, 'eventId', id), 'notification:node-event:' || id, 5
  FROM recorded
  WHERE event_type IN ('NODE_BACKUP_FAILED', 'NODE_STORAGE_LOST')
     OR (event_type = 'NODE_STATUS_UPDATED' AND payload -> 'details' ->> 'status' = 'FAILED');
  RETURN NULL;
END $$;
