-- A superseded node accrues no time (issue #37; domain/node-status-meaning.ts): its status
-- changes are recorded as SUPERSEDED while it is superseded, a word no bill counts, so its time
-- stops when a restore supersedes it and starts again if a failed restore releases it. A destroyed
-- node may be linked to the node now holding its wallet (superseded_by, for the restore fence);
-- it stays recorded as destroyed.
CREATE OR REPLACE FUNCTION node_status_as_recorded(status text, superseded_by text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN superseded_by IS NOT NULL AND status NOT IN ('DESTROYING', 'DESTROYED') THEN 'SUPERSEDED' ELSE status END
$$;

CREATE OR REPLACE FUNCTION record_node_status_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT'
     OR node_status_as_recorded(NEW.status, NEW.superseded_by) IS DISTINCT FROM node_status_as_recorded(OLD.status, OLD.superseded_by) THEN
    INSERT INTO node_status_changes (node_id, account_id, status)
      VALUES (NEW.id, NEW.user_id, node_status_as_recorded(NEW.status, NEW.superseded_by));
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER nodes_record_status_change ON nodes;
CREATE TRIGGER nodes_record_status_change AFTER INSERT OR UPDATE OF status, superseded_by ON nodes
  FOR EACH ROW EXECUTE FUNCTION record_node_status_change();

-- The nodes superseded now stop accruing from now (when they were superseded is not recorded).
INSERT INTO node_status_changes (node_id, account_id, status)
  SELECT id, user_id, 'SUPERSEDED' FROM nodes WHERE node_status_as_recorded(status, superseded_by) = 'SUPERSEDED';
