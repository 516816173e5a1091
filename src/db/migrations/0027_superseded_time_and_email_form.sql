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

-- Email addresses in one form (issue #37; domain/email.ts): NFC, lowercased. Stored addresses were
-- lowercased already (by JavaScript, as now), so what is left is NFC; lowercasing and NFC commute
-- (case mappings keep canonical equivalence), so the rows end in the very form the code now makes.
-- Users: when two addresses become one, a user whose address is in the form already keeps it, else
-- the oldest takes it; the other keeps its address as stored (nothing of it is lost, its tokens
-- keep working; signing in by that address no longer finds it) and is found, for the operator to
-- settle, by `SELECT id, email FROM users WHERE email <> normalize(email, NFC)`.
UPDATE users u SET email = normalize(u.email, NFC)
 WHERE u.email <> normalize(u.email, NFC)
   AND NOT EXISTS (
     SELECT 1 FROM users o
      WHERE o.id <> u.id AND normalize(o.email, NFC) = normalize(u.email, NFC)
        AND (o.email = normalize(o.email, NFC) OR o.created_at < u.created_at OR (o.created_at = u.created_at AND o.id < u.id))
   );

-- Invitations: every row in the form; of an account's pending invitations that are now of one
-- address, the newest stays and the others are revoked, as inviting an address again does.
UPDATE account_invitations SET email = normalize(email, NFC) WHERE email <> normalize(email, NFC);
UPDATE account_invitations i SET revoked_at = now()
 WHERE i.accepted_at IS NULL AND i.revoked_at IS NULL
   AND EXISTS (
     SELECT 1 FROM account_invitations n
      WHERE n.account_id = i.account_id AND n.email = i.email AND n.accepted_at IS NULL AND n.revoked_at IS NULL
        AND (n.created_at > i.created_at OR (n.created_at = i.created_at AND n.id > i.id))
   );
