-- One live copy of a Lightning wallet (a restore supersedes the node its backup came from), and
-- uploaded backups a user can list, delete and is capped on.
--
-- nodes.superseded_by: the node a restore of this node's wallet went into. A superseded node was
-- stopped by that restore and is never started, upgraded or unlocked again (its channel state is
-- older than its copy's: running it would broadcast revoked states); it can only be destroyed.
--
-- backups.source_node_id, source_made_at: for an upload, the node whose wallet the file holds and
-- when that node wrote it, when the service recognises the file (its SHA-256 is that of one of the
-- user's node backups); NULL when it does not. backups.network is now also set for uploads: the
-- network the recognised backup was of, or the one the user declared.
--
-- Rolling update: only nullable columns are added, which the previous version's `SELECT *` and
-- inserts ignore; a previous replica does not know the fence, so the fencing holds once every
-- replica runs this version (the README says so).

ALTER TABLE nodes ADD COLUMN superseded_by text;
ALTER TABLE backups ADD COLUMN source_node_id text;
ALTER TABLE backups ADD COLUMN source_made_at timestamptz;
-- Uploads are counted per user for the quota; the sha256 lookup recognises a file among a user's backups.
CREATE INDEX backups_user_sha256 ON backups (user_id, sha256);
