-- Notification emails a person can turn off per kind (issue #45): a node FAILED, a backup failed,
-- the account at 80% and at 100% of its plan's monthly API calls; and invitations sent by email.

-- A person's "do not email me this kind": no row, the kind is on (the default).
CREATE TABLE notification_opt_outs (
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('node-failed', 'backup-failed', 'api-calls-80', 'api-calls-100')),
  PRIMARY KEY (user_id, kind)
);

-- One row per event that was notified, written in the transaction that writes its emails: a second
-- attempt (a job retried, another replica's meter crossing the same threshold) finds it and sends
-- nothing. Keys: 'node-event:<node_events.id>', 'api-calls:<account>:<month>:<80|100>'.
CREATE TABLE notifications_sent (
  key text PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notifications_sent_created ON notifications_sent (created_at);

-- A node FAILED (a status change into FAILED, recorded once per transition) and a backup that
-- failed are node events: a job to notify each is queued in the transaction that records it, by
-- the same kind of trigger as the webhook fan-out's (0016), so no path that records one can miss it.
CREATE FUNCTION queue_node_events_for_notifications() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO jobs (kind, payload, singleton_key, max_attempts)
  SELECT 'notification.node-event', jsonb_build_object('v', 1, 'eventId', id), 'notification:node-event:' || id, 5
  FROM recorded
  WHERE event_type = 'NODE_BACKUP_FAILED'
     OR (event_type = 'NODE_STATUS_UPDATED' AND payload -> 'details' ->> 'status' = 'FAILED');
  RETURN NULL;
END $$;

CREATE TRIGGER node_events_queue_for_notifications AFTER INSERT ON node_events
  REFERENCING NEW TABLE AS recorded FOR EACH STATEMENT EXECUTE FUNCTION queue_node_events_for_notifications();

-- Whether the invitation's link went to the invitee by email (SMTP_URL set when it was made): only
-- then does accepting it prove the address. A link the inviter copied does not.
ALTER TABLE account_invitations ADD COLUMN emailed boolean NOT NULL DEFAULT false;
