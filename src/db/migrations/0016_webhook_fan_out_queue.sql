-- Webhook fan-out takes new events from a queue of their ids instead of marking each event.
--
-- Fan-out used to set node_events.webhook_fanned_out_at on every event it turned into deliveries.
-- That column is in the predicate of a partial index, so each mark wrote a new version of the
-- event's row with a new entry in every other index of node_events (six of them): most of what
-- fan-out cost the database. Now a trigger puts each new event's id in webhook_fan_out_queue, in
-- the transaction that records the event, and fan-out deletes the ids it takes; node_events rows
-- are written once.
--
-- During a rolling update the previous version keeps working and no event is fanned out twice:
-- its fan-out takes events whose webhook_fanned_out_at is null, and from here on events are born
-- with it set (the new default: the column now says when the event was queued). Its events are
-- queued by the trigger, like ours. The events not fanned out yet move into the queue below while
-- the fan-out lock (727003, as in webhook-deliveries.ts) is held and node_events takes no inserts.

SELECT pg_advisory_xact_lock(727003);
LOCK TABLE node_events IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE webhook_fan_out_queue (event_id bigint PRIMARY KEY);

INSERT INTO webhook_fan_out_queue (event_id) SELECT id FROM node_events WHERE webhook_fanned_out_at IS NULL;
UPDATE node_events SET webhook_fanned_out_at = now() WHERE webhook_fanned_out_at IS NULL;
ALTER TABLE node_events ALTER COLUMN webhook_fanned_out_at SET DEFAULT now();

-- One call per INSERT statement, however many events it records (a rollout records many at once).
CREATE FUNCTION queue_node_events_for_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_fan_out_queue (event_id) SELECT id FROM recorded;
  RETURN NULL;
END $$;

CREATE TRIGGER node_events_queue_for_webhooks AFTER INSERT ON node_events
  REFERENCING NEW TABLE AS recorded FOR EACH STATEMENT EXECUTE FUNCTION queue_node_events_for_webhooks();
