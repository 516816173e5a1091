-- The node an audit event is about, so a token limited to some nodes reads only their part of the
-- trail (GET /api/audit-events), as it follows only their events on the stream. NULL for events
-- about no node (tokens, sign-ins, releases): those are shown to tokens that reach every node.
-- Not a foreign key: the trail outlives a destroyed node's row.
ALTER TABLE audit_events ADD COLUMN node_id text;

-- Events recorded before this column: a node id as target, a certificate's serial, a backup's id.
UPDATE audit_events a SET node_id = a.target WHERE a.node_id IS NULL AND EXISTS (SELECT 1 FROM nodes n WHERE n.id = a.target);
UPDATE audit_events a SET node_id = c.node_id FROM client_certificates c
  WHERE a.node_id IS NULL AND a.action = 'certificate.revoked' AND c.serial = a.target;
UPDATE audit_events a SET node_id = b.node_id FROM backups b
  WHERE a.node_id IS NULL AND a.action = 'backup.deleted' AND b.id = a.target;

CREATE INDEX audit_events_user_node ON audit_events (user_id, node_id, id);
